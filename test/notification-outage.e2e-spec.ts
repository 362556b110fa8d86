import { NotificationWorkersRepository } from '../src/notifications/notification-workers.repository';
import { databaseEnv } from './support/database';
import { createMerchant, orderBody } from './support/factories';
import { NOTIFY_ENV } from './support/notifications';
import { Receiver, startReceiver, until, waitFor } from './support/receiver';
import { Relay, startRelay } from './support/relay';
import { startTestApp, TestApp } from './support/test-app';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The database's own server, not the run's pooler, as DATABASE_DIRECT_URL reaches it. */
const directUrl = (recorder: TestApp) => databaseEnv(recorder.db.url).DATABASE_DIRECT_URL ?? recorder.db.url;

/**
 * An instance that delivers, whose application connections (DATABASE_URL) go through
 * `relay`, as through a PgBouncer, while its queue reaches the database directly
 * (DATABASE_DIRECT_URL), or through `queueRelay` (in front of the database's own server).
 */
async function deliveringBehind(
  relay: Relay,
  recorder: TestApp,
  env: Record<string, string>,
  queueRelay?: Relay,
): Promise<TestApp> {
  const pooled = new URL(recorder.db.url);
  pooled.host = `127.0.0.1:${relay.port}`;
  const direct = new URL(directUrl(recorder));
  if (queueRelay) direct.host = `127.0.0.1:${queueRelay.port}`;
  return startTestApp(
    {
      ...NOTIFY_ENV,
      ...databaseEnv(recorder.db.url),
      ...env,
      DATABASE_URL: pooled.toString(),
      DATABASE_DIRECT_URL: direct.toString(),
    },
    { ...recorder.db, url: pooled.toString() },
  );
}

/** Pays one order whose notify_url is `url`, through the recorder; its event's id. */
async function payOneOrder(recorder: TestApp, url: string): Promise<string> {
  return (await payOneOrderOf(recorder, url)).eventId;
}

/** As payOneOrder, with the test key of the merchant it made. */
async function payOneOrderOf(recorder: TestApp, url: string): Promise<{ eventId: string; testKey: string }> {
  const { testKey } = await createMerchant(recorder, `Merchant of ${url}`);
  const order = await recorder
    .http()
    .post('/v1/orders')
    .set('X-Api-Key', testKey)
    .send(orderBody({ notify_url: url }));
  await recorder.http().post(`/v1/test_helpers/orders/${order.body.data.id}/pay`).set('X-Api-Key', testKey).expect(200);
  const { rows } = await recorder.db.pool.query('SELECT id FROM events WHERE order_id = $1', [order.body.data.id]);
  return { eventId: rows[0].id as string, testKey };
}

async function deliveryOf(recorder: TestApp, eventId: string) {
  const { rows } = await recorder.db.pool.query(
    `SELECT e.delivery_status, e.attempts, (SELECT count(*)::int FROM notification_attempts a WHERE a.event_id = e.id) AS recorded
       FROM events e WHERE e.id = $1`,
    [eventId],
  );
  return rows[0] as { delivery_status: string; attempts: number; recorded: number };
}

/**
 * Waits for the event's delivery, then checks it was sent once and recorded once: what a
 * live instance's attempt must come to, whatever happened to its way to the database.
 */
async function expectSentOnce(recorder: TestApp, receiver: Receiver, eventId: string): Promise<void> {
  await until(async () => (await deliveryOf(recorder, eventId)).delivery_status === 'delivered');
  expect(await deliveryOf(recorder, eventId)).toEqual({ delivery_status: 'delivered', attempts: 1, recorded: 1 });
  expect(receiver.received.map((each) => each.headers['webhook-id'])).toEqual([eventId]);
}

/**
 * docs/notifications.md, "At least once": a delivered event is sent again only when a
 * process died between the merchant's 2xx and recording it. An instance whose pooler is
 * away is alive: it keeps the attempt, and records it once the pooler is back.
 */
describe('notifications while the connection pooler is away (docs/notifications.md, "Engine")', () => {
  let recorder: TestApp;
  const relays: Relay[] = [];
  const deliverers: TestApp[] = [];

  beforeEach(async () => {
    recorder = await startTestApp({ ...NOTIFY_ENV, NOTIFY_WORKERS: 'off' });
  });
  /** An instance's two ways to the database, through relays that can go away. */
  const waysToTheDatabase = async () => {
    const ways = {
      pooled: await startRelay(new URL(recorder.db.url)),
      queue: await startRelay(new URL(directUrl(recorder))),
    };
    relays.push(ways.pooled, ways.queue);
    return ways;
  };
  afterEach(async () => {
    // Back first, so that the instances can close their connections.
    for (const relay of relays) {
      relay.thaw();
      if (relay.isCut()) await relay.restore();
    }
    for (const deliverer of deliverers.splice(0)) await deliverer.close();
    for (const relay of relays.splice(0)) await relay.close();
    await recorder.close();
  });

  // Recording was given about 7 s; then the job failed, and the queue sent it again.
  it('records an attempt the merchant accepted once the pooler is back, however long it was away, and sends it once', async () => {
    const receiver = await startReceiver(() => ({ status: 200 }), 1500);
    const relay = await startRelay(new URL(recorder.db.url));
    relays.push(relay);
    try {
      deliverers.push(await deliveringBehind(relay, recorder, { NOTIFY_TIMEOUT_MS: '10000' }));
      const eventId = await payOneOrder(recorder, receiver.url);
      await until(() => receiver.received.length === 1);
      await relay.cut();
      await pause(12_000);
      await relay.restore();
      await until(async () => (await deliveryOf(recorder, eventId)).delivery_status === 'delivered');
      await pause(3000);
      expect(receiver.received.map((each) => each.headers['webhook-id'])).toEqual([eventId]);
      expect(await deliveryOf(recorder, eventId)).toEqual({ delivery_status: 'delivered', attempts: 1, recorded: 1 });
    } finally {
      await receiver.close();
    }
  }, 60_000);

  // Its heartbeat went through the pooler too: its lease lapsed while its attempt was in
  // flight, and an instance whose pooler was up took the attempt and sent it again.
  it('keeps its lease while its own pooler is away, so an instance whose pooler is up never takes its attempt', async () => {
    // Answered after 26 s: past the 20 s lease, within the attempt's timeout.
    const receiver = await startReceiver(() => ({ status: 200 }), 26_000);
    const relay = await startRelay(new URL(recorder.db.url));
    relays.push(relay);
    const timeouts = { NOTIFY_TIMEOUT_MS: '40000' };
    try {
      deliverers.push(await deliveringBehind(relay, recorder, timeouts));
      const eventId = await payOneOrder(recorder, receiver.url);
      await until(() => receiver.received.length === 1);
      // Another instance, whose own way to the database stays up throughout.
      deliverers.push(await startTestApp({ ...NOTIFY_ENV, ...timeouts }, recorder.db));
      await relay.cut();
      // Past the lease, and past the merchant's answer.
      await pause(28_000);
      await relay.restore();
      await expectSentOnce(recorder, receiver, eventId);
      expect(receiver.maxConcurrentPerId).toBe(1);
    } finally {
      await receiver.close();
    }
  }, 90_000);

  // After an outage every live instance's lease is as old as the outage: the first
  // instance whose heartbeat got through took the others' attempts in flight at once.
  // Frozen, the heartbeats hang instead of failing, and end together when it thaws.
  it.each([
    ['stops', (relay: Relay) => relay.cut(), (relay: Relay) => relay.restore()],
    ['freezes', (relay: Relay) => relay.freeze(), (relay: Relay) => relay.thaw()],
  ] as const)(
    'when the database %s, gives every instance a whole lease to renew its own before taking its attempts',
    async (_outage, stop, resume) => {
      const receiver = await startReceiver(() => ({ status: 200 }), 30_000);
      const [holding, other] = [await waysToTheDatabase(), await waysToTheDatabase()];
      const cut = (ways: typeof holding) => Promise.all([stop(ways.pooled), stop(ways.queue)]);
      const restore = (ways: typeof holding) => Promise.all([resume(ways.pooled), resume(ways.queue)]);
      const timeouts = { NOTIFY_TIMEOUT_MS: '40000' };
      try {
        deliverers.push(await deliveringBehind(holding.pooled, recorder, timeouts, holding.queue));
        const eventId = await payOneOrder(recorder, receiver.url);
        await until(() => receiver.received.length === 1);
        deliverers.push(await deliveringBehind(other.pooled, recorder, timeouts, other.queue));
        await Promise.all([cut(holding), cut(other)]);
        await pause(22_000);
        // The database is back for the other instance 6 s before it is for the one holding the attempt.
        await restore(other);
        await pause(6000);
        await restore(holding);
        await expectSentOnce(recorder, receiver, eventId);
      } finally {
        await receiver.close();
      }
    },
    90_000,
  );

  // The worst moment for the freeze above: just after an instance renewed its own lease,
  // as it begins the transaction that unlocks the silent instances' jobs. Held up, that
  // transaction began after the freeze and judged the others' leases as of then: it
  // unlocked the attempt in flight, and the instance sent it again.
  it('when the database freezes as an instance begins to unlock the jobs of silent ones, unlocks none of those it finds silent after the freeze', async () => {
    // Answered after 60 s: after both thaws, so the attempt is still in flight, unrecorded,
    // when the other instance's transaction reaches the database.
    const receiver = await startReceiver(() => ({ status: 200 }), 60_000);
    const [holding, other] = [await waysToTheDatabase(), await waysToTheDatabase()];
    const timeouts = { NOTIFY_TIMEOUT_MS: '70000' };
    try {
      deliverers.push(await deliveringBehind(holding.pooled, recorder, timeouts, holding.queue));
      const eventId = await payOneOrder(recorder, receiver.url);
      await until(() => receiver.received.length === 1);
      deliverers.push(await deliveringBehind(other.pooled, recorder, timeouts, other.queue));
      // Once it has renewed its own lease for a whole lease, a heartbeat renews it and begins
      // the unlocking transaction (the only BEGIN on the queue's connections once they have
      // started): frozen there.
      await other.queue.freezeAtNext('BEGIN');
      for (const relay of [other.pooled, holding.pooled, holding.queue]) relay.freeze();
      await pause(22_000);
      other.pooled.thaw();
      other.queue.thaw();
      await pause(6000);
      holding.pooled.thaw();
      holding.queue.thaw();
      await expectSentOnce(recorder, receiver, eventId);
    } finally {
      await receiver.close();
    }
  }, 120_000);

  // An instance that starts as an outage ends (it waited for the database at start-up, or an
  // orchestrator restarted it) finds every live instance's lease as old as the outage: it
  // counted as renewing for a lease already, and took their attempts at its first heartbeat.
  it('gives an instance started as the database comes back a whole lease of its own before it takes any attempt', async () => {
    const receiver = await startReceiver(() => ({ status: 200 }), 30_000);
    const { pooled, queue } = await waysToTheDatabase();
    const timeouts = { NOTIFY_TIMEOUT_MS: '40000' };
    try {
      deliverers.push(await deliveringBehind(pooled, recorder, timeouts, queue));
      const eventId = await payOneOrder(recorder, receiver.url);
      await until(() => receiver.received.length === 1);
      pooled.freeze();
      queue.freeze();
      await pause(22_000);
      // The database is there for a new instance 6 s before it is back for the one holding the attempt.
      deliverers.push(await startTestApp({ ...NOTIFY_ENV, ...timeouts }, recorder.db));
      await pause(6000);
      pooled.thaw();
      queue.thaw();
      await expectSentOnce(recorder, receiver, eventId);
    } finally {
      await receiver.close();
    }
  }, 90_000);

  // A connection the network lost without a word: the heartbeat's statement waited on it
  // for ever, and no heartbeat ran again in the life of the process.
  it("renews its lease on a new connection when the heartbeat's own stops answering", async () => {
    const { pooled, queue } = await waysToTheDatabase();
    deliverers.push(await deliveringBehind(pooled, recorder, {}, queue));
    // The next heartbeat's renewal (within 5 s), on the heartbeat's connection.
    await queue.stallAtNext('notification_workers');
    await pause(25_000);
    const { rows } = await recorder.db.pool.query(
      `SELECT count(*)::int AS n FROM notification_workers WHERE seen_at > now() - interval '10 seconds'`,
    );
    expect(rows[0].n).toBe(1);
  }, 60_000);

  // A scheduled job run again finds its slot past; a redelivery's had nothing to find, and
  // its job, run again once the replaced pool's lease lapsed, sent it a second time.
  it("sends a redelivery once when its job's end could not be recorded", async () => {
    const receiver = await startReceiver(() => ({ status: 200 }), 3000);
    const { pooled, queue } = await waysToTheDatabase();
    try {
      deliverers.push(await deliveringBehind(pooled, recorder, { NOTIFY_TIMEOUT_MS: '10000' }, queue));
      const { eventId, testKey } = await payOneOrderOf(recorder, receiver.url);
      await until(async () => (await deliveryOf(recorder, eventId)).delivery_status === 'delivered');
      await recorder.http().post(`/v1/events/${eventId}/redeliver`).set('X-Api-Key', testKey).expect(202);
      await until(() => receiver.received.length === 2);
      // The redelivery is recorded, but its job's end cannot be: the pool is replaced.
      await queue.cut();
      await until(async () => (await deliveryOf(recorder, eventId)).attempts === 2);
      await pause(3000);
      await queue.restore();
      // The job is unlocked once the replaced pool's lease lapses, and runs again.
      await waitFor(recorder.db.pool, 'SELECT count(*) = 0 AS done FROM graphile_worker.jobs', [], 60_000);
      expect(receiver.received.map((each) => each.headers['webhook-id'])).toEqual([eventId, eventId]);
      expect(await deliveryOf(recorder, eventId)).toEqual({ delivery_status: 'delivered', attempts: 2, recorded: 2 });
    } finally {
      await receiver.close();
    }
  }, 90_000);

  // The queue's pool shuts itself down when it cannot record a job's end, and a new one
  // takes its place; the attempts the old one still ran lost their lease with it.
  it("keeps the lease of a replaced worker pool's attempts until they end", async () => {
    const slow = await startReceiver(() => ({ status: 200 }), 35_000);
    const quick = await startReceiver(() => ({ status: 200 }), 5000);
    const { pooled, queue } = await waysToTheDatabase();
    const timeouts = { NOTIFY_TIMEOUT_MS: '40000' };
    try {
      deliverers.push(await deliveringBehind(pooled, recorder, timeouts, queue));
      const held = await payOneOrder(recorder, slow.url);
      await until(() => slow.received.length === 1);
      const ended = await payOneOrder(recorder, quick.url);
      await until(() => quick.received.length === 1);
      // Another instance, whose way to the database stays up throughout.
      deliverers.push(await startTestApp({ ...NOTIFY_ENV, ...timeouts }, recorder.db));
      // The quick attempt is recorded, but its job's end cannot be: the pool is replaced.
      await queue.cut();
      await until(async () => (await deliveryOf(recorder, ended)).delivery_status === 'delivered');
      await pause(3000);
      await queue.restore();
      await until(async () => (await deliveryOf(recorder, held)).delivery_status === 'delivered', 45_000);
      expect(await deliveryOf(recorder, held)).toEqual({ delivery_status: 'delivered', attempts: 1, recorded: 1 });
      expect(slow.received.map((each) => each.headers['webhook-id'])).toEqual([held]);
    } finally {
      await slow.close();
      await quick.close();
    }
  }, 90_000);
});

/**
 * The same promise through the passing failures of a database that stays up: the record
 * of an attempt the merchant accepted is tried again, not given up (the queue would
 * then send it again).
 */
describe('notifications through a passing failure of a live database', () => {
  let app: TestApp;

  beforeEach(async () => {
    app = await startTestApp({ ...NOTIFY_ENV, NOTIFY_TIMEOUT_MS: '10000' });
  });
  afterEach(() => app.close());

  // graphile-worker unlocks a job locked for more than 4 hours, whoever holds it: one held
  // through a long outage would have been sent again. The heartbeat renews its jobs' lock
  // times every 10 minutes (delivery-queue.ts); here the statement it runs, on a job a live
  // instance holds, then graphile-worker's own reset.
  it('renews the lock time of the jobs a live instance holds, so the queue never unlocks them', async () => {
    const receiver = await startReceiver(() => ({ status: 200 }), 8000);
    try {
      const eventId = await payOneOrder(app, receiver.url);
      await until(() => receiver.received.length === 1);
      const lockedAt = async () =>
        (
          await app.db.pool.query(
            `SELECT locked_by, locked_at > now() - interval '4 hours' AS within FROM graphile_worker._private_jobs
              WHERE locked_by IS NOT NULL`,
          )
        ).rows as { locked_by: string; within: boolean }[];
      await app.db.pool.query(
        `UPDATE graphile_worker._private_jobs SET locked_at = now() - interval '3 hours 59 minutes'
          WHERE locked_by IS NOT NULL`,
      );
      const [held] = await lockedAt();
      await new NotificationWorkersRepository(app.db.pool).renewJobLocks([held.locked_by]);
      // graphile-worker's resetLockedAt, a minute later by its clock.
      await app.db.pool.query(
        `UPDATE graphile_worker._private_jobs SET locked_at = NULL, locked_by = NULL
          WHERE locked_at < now() + interval '1 minute' - interval '4 hours'`,
      );
      expect(await lockedAt()).toEqual([{ locked_by: held.locked_by, within: true }]);
      await until(async () => (await deliveryOf(app, eventId)).delivery_status === 'delivered');
      expect(receiver.received.map((each) => each.headers['webhook-id'])).toEqual([eventId]);
    } finally {
      await receiver.close();
    }
  }, 60_000);

  // A cancel (57014) while recording failed the job, as a deadlock (40P01) or a
  // statement timeout would have.
  it('records an attempt whose record was cancelled when it tries again, and sends it once', async () => {
    const receiver = await startReceiver(() => ({ status: 200 }), 1500);
    const holder = await app.db.pool.connect();
    try {
      const eventId = await payOneOrder(app, receiver.url);
      await until(() => receiver.received.length === 1);
      // The record waits on the event's row, and is cancelled while it waits.
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM events WHERE id = $1 FOR UPDATE', [eventId]);
      let waiting: number | undefined;
      await until(async () => {
        const { rows } = await app.db.pool.query(
          `SELECT pid FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%notification_attempts%'`,
        );
        waiting = rows[0]?.pid as number | undefined;
        return waiting !== undefined;
      });
      // Cancelled at once, long before its lock_timeout would end the wait (a case retried before).
      const { rows: cancelled } = await app.db.pool.query('SELECT pg_cancel_backend($1) AS done', [waiting]);
      expect(cancelled[0].done).toBe(true);
      await pause(500);
      await holder.query('COMMIT');
      await until(async () => (await deliveryOf(app, eventId)).delivery_status === 'delivered');
      // Past the queue's first retry of a failed job (about 3 s).
      await pause(5000);
      expect(receiver.received.map((each) => each.headers['webhook-id'])).toEqual([eventId]);
      expect(await deliveryOf(app, eventId)).toEqual({ delivery_status: 'delivered', attempts: 1, recorded: 1 });
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      holder.release();
      await receiver.close();
    }
  }, 60_000);

  // Passing failures are tried again a bounded number of times, unlike an outage: an
  // operator's cancel of a stuck record, or a statement that always times out, ends as a
  // failed job, run again later, rather than a worker held for good.
  it('fails the job after 10 passing failures of its record in a row, and frees its worker', async () => {
    const receiver = await startReceiver(() => ({ status: 200 }));
    // Every record of an attempt fails, as a deadlock would.
    await app.db.pool.query(
      `CREATE FUNCTION kuko_test_deadlock() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN RAISE EXCEPTION 'deadlock detected (test)' USING ERRCODE = '40P01'; END $$`,
    );
    await app.db.pool.query(
      `CREATE TRIGGER kuko_test_deadlock BEFORE INSERT ON notification_attempts
         FOR EACH ROW EXECUTE FUNCTION kuko_test_deadlock()`,
    );
    try {
      const eventId = await payOneOrder(app, receiver.url);
      await until(() => receiver.received.length === 1);
      // Eleven tries, 250 ms growing to 2 s apart: about 18 s.
      await waitFor(
        app.db.pool,
        `SELECT locked_by IS NULL AND last_error LIKE '%deadlock detected (test)%' AS done
           FROM graphile_worker._private_jobs WHERE payload->>'event_id' = $1`,
        [eventId],
        40_000,
      );
    } finally {
      await app.db.pool.query('DROP TRIGGER kuko_test_deadlock ON notification_attempts');
      await receiver.close();
    }
  }, 60_000);
});
