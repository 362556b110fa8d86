import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { startClusterProcess } from './support/cluster-client.cjs';
import { createTestDatabase, databaseEnv } from './support/database';
import { NOTIFY_ENV } from './support/notifications';
import {
  DELIVER_TASK,
  EventsRepository,
  JOB_MAX_ATTEMPTS,
  slotJobKeySuffix,
} from '../src/notifications/events.repository';
import { Receiver, startReceiver, until, waitFor, waitForSettled } from './support/receiver';
import { startServerProcess } from './support/server-process';
import { startTestApp, TestApp } from './support/test-app';
import { createMerchant, orderBody } from './support/factories';

/** Long enough that a lost attempt's slot is still ahead when its job is recovered. */
const SCHEDULE = '0,1s,1s,2s,4s,8s,14s'; // due 0, 1, 2, 4, 8, 16 and 30 s after the commit

async function payOrders(t: TestApp, key: string, notifyUrl: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const order = await t
      .http()
      .post('/v1/orders')
      .set('X-Api-Key', key)
      .send(orderBody({ notify_url: notifyUrl }));
    await t.http().post(`/v1/test_helpers/orders/${order.body.data.id}/pay`).set('X-Api-Key', key).expect(200);
    ids.push(order.body.data.id);
  }
  const { rows } = await t.db.pool.query('SELECT id FROM events WHERE order_id = ANY($1)', [ids]);
  return rows.map((row) => row.id as string);
}

function countById(ids: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1);
  return counts;
}

describe('notifications survive crashes (docs/notifications.md, "Guarantees")', () => {
  it('delivers every event when the server is kill -9ed with deliveries in flight, and restarted', async () => {
    // This app only records (its workers are off); the server processes deliver.
    const t = await startTestApp({ ...NOTIFY_ENV, NOTIFY_WORKERS: 'off' });
    const receiver = await startReceiver(() => ({ status: 200 }), 400);
    const env = {
      DATABASE_URL: t.db.url,
      NOTIFY_ALLOW_PRIVATE_NETWORKS: 'true',
      NOTIFY_RETRY_SCHEDULE: SCHEDULE,
      NOTIFY_WORKER_CONCURRENCY: '5',
    };
    let server = await startServerProcess(env);
    try {
      const merchant = await createMerchant(t);
      const events = await payOrders(t, merchant.testKey, receiver.url, 20);
      await until(() => receiver.received.length >= 3);
      await server.kill('SIGKILL');
      const killedAt = Date.now();
      const beforeKill = new Set(receiver.received.map((r) => String(r.headers['webhook-id'])));

      server = await startServerProcess(env);
      await waitForSettled(t.db.pool, 90000);
      // The jobs the killed instance held are retried within about 30 s (docs/notifications.md, "Timing"), not hours.
      expect(Date.now() - killedAt).toBeLessThan(60_000);

      const { rows } = await t.db.pool.query('SELECT id, delivery_status FROM events WHERE id = ANY($1)', [events]);
      expect(rows.every((row) => row.delivery_status === 'delivered')).toBe(true);
      const counts = countById(receiver.received.map((r) => String(r.headers['webhook-id'])));
      expect(events.filter((id) => !counts.has(id))).toEqual([]);
      // A repeat only where the kill raced the answer: the event was in flight at the kill.
      const repeated = [...counts].filter(([, n]) => n > 1).map(([id]) => id);
      expect(repeated.filter((id) => !beforeKill.has(id))).toEqual([]);
    } finally {
      await server.kill('SIGKILL');
      await receiver.close();
      await t.close();
    }
  }, 150000);

  it('delivers events committed while no instance delivered, once one starts', async () => {
    const recorder = await startTestApp({ ...NOTIFY_ENV, NOTIFY_WORKERS: 'off' });
    const receiver = await startReceiver();
    let deliverer: TestApp | null = null;
    try {
      const merchant = await createMerchant(recorder);
      const events = await payOrders(recorder, merchant.testKey, receiver.url, 5);
      await new Promise((resolve) => setTimeout(resolve, 500));
      const queued = await recorder.db.pool.query('SELECT count(*)::int AS n FROM graphile_worker.jobs');
      expect(queued.rows[0].n).toBe(0);
      expect(receiver.received).toHaveLength(0);

      deliverer = await startTestApp({ ...NOTIFY_ENV }, recorder.db);
      await waitForSettled(recorder.db.pool);
      const counts = countById(receiver.received.map((r) => String(r.headers['webhook-id'])));
      expect(events.map((id) => counts.get(id))).toEqual([1, 1, 1, 1, 1]);
    } finally {
      await deliverer?.close();
      await receiver.close();
      await recorder.close();
    }
  });

  it('on SIGTERM lets the attempt in flight finish and records it before exiting', async () => {
    const t = await startTestApp({ ...NOTIFY_ENV, NOTIFY_WORKERS: 'off' });
    const receiver = await startReceiver(() => ({ status: 200 }), 1500);
    const server = await startServerProcess({ DATABASE_URL: t.db.url, NOTIFY_ALLOW_PRIVATE_NETWORKS: 'true' });
    try {
      const merchant = await createMerchant(t);
      const [eventId] = await payOrders(t, merchant.testKey, receiver.url, 1);
      await until(() => receiver.received.length === 1);
      server.child.kill('SIGTERM');
      const code = await server.exited;
      expect(code).toBe(0);
      const { rows } = await t.db.pool.query('SELECT delivery_status, attempts FROM events WHERE id = $1', [eventId]);
      expect(rows[0]).toEqual({ delivery_status: 'delivered', attempts: 1 });
      const jobs = await t.db.pool.query('SELECT count(*)::int AS n FROM graphile_worker.jobs');
      expect(jobs.rows[0].n).toBe(0);
    } finally {
      await server.kill('SIGKILL');
      await receiver.close();
      await t.close();
    }
  }, 60000);

  it('keeps its lease while SIGTERM drains an attempt longer than the lease, so no other instance sends it again', async () => {
    const t = await startTestApp({ ...NOTIFY_ENV, NOTIFY_WORKERS: 'off' });
    // Answered after 26 s: past the 20 s lease after which a silent instance's jobs are
    // unlocked for others, within the draining instance's own timeouts.
    const receiver = await startReceiver(() => ({ status: 200 }), 26_000);
    const timeouts = { NOTIFY_TIMEOUT_MS: '40000', SHUTDOWN_TIMEOUT_MS: '60000' };
    const server = await startServerProcess({
      DATABASE_URL: t.db.url,
      NOTIFY_ALLOW_PRIVATE_NETWORKS: 'true',
      ...timeouts,
    });
    let other: TestApp | null = null;
    try {
      const merchant = await createMerchant(t);
      const [eventId] = await payOrders(t, merchant.testKey, receiver.url, 1);
      await until(() => receiver.received.length === 1);
      // A second instance that delivers, and would take over jobs whose lease lapsed.
      other = await startTestApp({ ...NOTIFY_ENV, ...timeouts }, t.db);
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
      await new Promise((resolve) => setTimeout(resolve, 6000));
      expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([eventId]);
      const { rows } = await t.db.pool.query('SELECT delivery_status, attempts FROM events WHERE id = $1', [eventId]);
      expect(rows[0]).toEqual({ delivery_status: 'delivered', attempts: 1 });
    } finally {
      await server.kill('SIGKILL');
      await other?.close();
      await receiver.close();
      await t.close();
    }
  }, 90000);

  // Nest runs the shutdown hooks, which wait for the attempts, before it closes the HTTP
  // server: the listener used to stay open, taking new writes, until the attempt ended.
  it('stops taking connections at once on SIGTERM while a notification attempt still drains', async () => {
    const t = await startTestApp({ ...NOTIFY_ENV, NOTIFY_WORKERS: 'off' });
    const receiver = await startReceiver(() => ({ status: 200 }), 6000);
    const server = await startServerProcess({
      DATABASE_URL: t.db.url,
      NOTIFY_ALLOW_PRIVATE_NETWORKS: 'true',
      NOTIFY_TIMEOUT_MS: '20000',
      SHUTDOWN_TIMEOUT_MS: '30000',
    });
    try {
      const merchant = await createMerchant(t);
      const [eventId] = await payOrders(t, merchant.testKey, receiver.url, 1);
      await until(() => receiver.received.length === 1);
      let exited = false;
      void server.exited.then(() => (exited = true));
      server.child.kill('SIGTERM');
      // Within 3 s, while the attempt has 5 s more to wait for its answer.
      await until(
        () =>
          fetch(`${server.url}/health`).then(
            () => false,
            () => true,
          ),
        3000,
      );
      expect(exited).toBe(false);
      expect(await server.exited).toBe(0);
      const { rows } = await t.db.pool.query('SELECT delivery_status FROM events WHERE id = $1', [eventId]);
      expect(rows[0]).toEqual({ delivery_status: 'delivered' });
    } finally {
      await server.kill('SIGKILL');
      await receiver.close();
      await t.close();
    }
  }, 60000);

  // `npm run worker` waited for its attempt as long as NOTIFY_TIMEOUT_MS allows (up to
  // 120 s), past any orchestrator's grace period.
  it('npm run worker exits SHUTDOWN_TIMEOUT_MS after SIGTERM, cutting off an attempt that outlasts it', async () => {
    const t = await startTestApp({ ...NOTIFY_ENV, NOTIFY_WORKERS: 'off' });
    const receiver = await startReceiver(() => ({ status: 200 }), 30_000);
    const worker = spawn(process.execPath, [join(__dirname, '..', 'dist', 'worker.js')], {
      env: {
        ...process.env,
        LOG_LEVEL: 'info',
        ...databaseEnv(t.db.url),
        NOTIFY_ALLOW_PRIVATE_NETWORKS: 'true',
        NOTIFY_TIMEOUT_MS: '30000',
        SHUTDOWN_TIMEOUT_MS: '1500',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => worker.once('exit', (code) => resolve(code)));
    let output = '';
    worker.stdout.on('data', (chunk) => (output += chunk));
    worker.stderr.resume();
    try {
      await until(() => output.includes('Delivering notifications'));
      const merchant = await createMerchant(t);
      await payOrders(t, merchant.testKey, receiver.url, 1);
      await until(() => receiver.received.length === 1);
      const signalled = Date.now();
      worker.kill('SIGTERM');
      expect(await exited).toBe(1);
      expect(Date.now() - signalled).toBeLessThan(10_000);
      expect(output).toContain('notification attempts in flight outlasted SHUTDOWN_TIMEOUT_MS=1500; exiting now');
    } finally {
      worker.kill('SIGKILL');
      await receiver.close();
      await t.close();
    }
  }, 60000);

  /**
   * One paid order's event, recorded by an app that delivers nothing; `deliver` starts a
   * second instance, on the same database, that delivers.
   */
  async function withOneEvent(
    scenario: (context: {
      recorder: TestApp;
      receiver: Receiver;
      testKey: string;
      eventId: string;
      deliver: () => Promise<void>;
    }) => Promise<void>,
    slowMerchant = false,
  ): Promise<void> {
    const recorder = await startTestApp({ ...NOTIFY_ENV, NOTIFY_WORKERS: 'off' });
    // A slow merchant answers after 35 s, within the attempt's timeout: past the lease a
    // new instance renews before it unlocks a killed instance's jobs.
    const receiver = await startReceiver(undefined, slowMerchant ? 35_000 : 0);
    const deliverers: TestApp[] = [];
    try {
      const { testKey } = await createMerchant(recorder);
      const [eventId] = await payOrders(recorder, testKey, receiver.url, 1);
      const deliver = async () => {
        const timeout = slowMerchant ? { NOTIFY_TIMEOUT_MS: '45000' } : {};
        deliverers.push(await startTestApp({ ...NOTIFY_ENV, ...timeout }, recorder.db));
      };
      await scenario({ recorder, receiver, testKey, eventId, deliver });
    } finally {
      for (const deliverer of deliverers) await deliverer.close();
      await receiver.close();
      await recorder.close();
    }
  }

  /** A job as the pool of a killed instance leaves it: locked a minute ago, with `attempts` charged. */
  function lockedByAKilledInstance(t: TestApp, where: string, param: string, attempts: number) {
    return t.db.pool.query(
      `UPDATE graphile_worker._private_jobs
          SET attempts = $2, locked_by = 'pool-of-a-killed-instance', locked_at = now() - interval '1 minute'
        WHERE ${where}
        RETURNING payload`,
      [param, attempts],
    );
  }

  it(
    'delivers an event whose job was held by ten killed instances: a kill does not use up its retries',
    () =>
      withOneEvent(async ({ recorder, receiver, eventId, deliver }) => {
        // The job as ten kill -9s leave it: each lock was charged one of its 10 attempts
        // (graphile-worker counts one when it locks a job), and the last pool to lock it died.
        const job = await recorder.db.pool.query(
          `SELECT (graphile_worker.add_job($2, json_build_object('event_id', $1::text, 'slot', 0),
                                         max_attempts => $3)).id`,
          [eventId, DELIVER_TASK, JOB_MAX_ATTEMPTS],
        );
        await lockedByAKilledInstance(recorder, 'id = $1', job.rows[0].id, 10);
        await recorder.db.pool.query('UPDATE events SET enqueued = true WHERE id = $1', [eventId]);

        // Unlocked once the new instance has renewed its own lease for a whole lease (20 s).
        await deliver();
        await waitForSettled(recorder.db.pool, 45000);
        const { rows } = await recorder.db.pool.query('SELECT delivery_status FROM events WHERE id = $1', [eventId]);
        expect(rows[0].delivery_status).toBe('delivered');
        expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([eventId]);
      }),
    90000,
  );

  it(
    'sends a redelivery once when the process that put it back died before its job ended',
    () =>
      withOneEvent(async ({ recorder, receiver, testKey, eventId, deliver }) => {
        // Its schedule over, so that the redelivery is its only attempt.
        await recorder.db.pool.query(
          `UPDATE events SET enqueued = true, delivery_status = 'failed', next_attempt_at = NULL WHERE id = $1`,
          [eventId],
        );
        await recorder.http().post(`/v1/events/${eventId}/redeliver`).set('X-Api-Key', testKey).expect(202);
        // A worker took the job, found the merchant at its share of the workers and put the
        // attempt back; then its instance was killed before the queue marked the job done.
        const taken = await lockedByAKilledInstance(
          recorder,
          `id = (SELECT id FROM graphile_worker.jobs WHERE payload->>'event_id' = $1)`,
          eventId,
          1,
        );
        await recorder.app.get(EventsRepository).putBack({ ...taken.rows[0].payload, put_back: 1 }, 0);

        await deliver();
        // Both jobs have run: the killed instance's too, once its lease ran out.
        await waitFor(recorder.db.pool, 'SELECT count(*) = 0 AS done FROM graphile_worker.jobs', [], 45000);
        expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([eventId]);
        const attempts = await recorder.db.pool.query('SELECT kind FROM notification_attempts WHERE event_id = $1', [
          eventId,
        ]);
        expect(attempts.rows).toEqual([{ kind: 'redelivery' }]);
      }),
    90000,
  );

  it(
    'sends a scheduled attempt once when the process that put it back died, though both its jobs run at once',
    () =>
      withOneEvent(async ({ recorder, receiver, eventId, deliver }) => {
        // The first attempt's job, added by the relay as in production; a worker took it,
        // found the merchant at its share of the workers and put it back, then its instance
        // was killed.
        const events = recorder.app.get(EventsRepository);
        expect(await events.relay(10)).toBe(1);
        const taken = await lockedByAKilledInstance(
          recorder,
          `id = (SELECT id FROM graphile_worker.jobs WHERE payload->>'event_id' = $1)`,
          eventId,
          1,
        );
        expect(taken.rows[0].payload.job_key).toBe(eventId + slotJobKeySuffix(0));
        await events.putBack({ ...taken.rows[0].payload, put_back: 1 }, 0);

        // The new instance takes the put-back job as it starts, and the killed one's once it
        // has renewed its own lease for a whole lease (20 s): the merchant answers slowly
        // (35 s), so the first has not recorded its attempt when the second reads the event.
        // Only the job that holds the key may send.
        await deliver();
        await until(() => receiver.received.length > 0);
        // They did overlap: the killed instance's job has run and ended while the merchant
        // still holds the other's request, its attempt not yet recorded.
        await waitFor(
          recorder.db.pool,
          `SELECT (SELECT count(*) FROM graphile_worker.jobs) = 1
                  AND NOT EXISTS (SELECT 1 FROM notification_attempts WHERE event_id = $1) AS done`,
          [eventId],
          32_000,
        );
        await waitFor(recorder.db.pool, 'SELECT count(*) = 0 AS done FROM graphile_worker.jobs', [], 45000);
        expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([eventId]);
        const attempts = await recorder.db.pool.query(
          'SELECT count(*)::int AS n FROM notification_attempts WHERE event_id = $1',
          [eventId],
        );
        expect(attempts.rows[0].n).toBe(1);
      }, true),
    90000,
  );

  it('delivers every event when PostgreSQL restarts during deliveries', async () => {
    const cluster = await startClusterProcess('notify-restart');
    const db = await createTestDatabase(cluster.url);
    const t = await startTestApp(
      { ...NOTIFY_ENV, NOTIFY_RETRY_SCHEDULE: SCHEDULE, NOTIFY_WORKER_CONCURRENCY: '4' },
      db,
    );
    const receiver = await startReceiver(() => ({ status: 200 }), 200);
    try {
      const merchant = await createMerchant(t);
      const events = await payOrders(t, merchant.testKey, receiver.url, 30);
      await until(() => receiver.received.length >= 3);
      await cluster.restart();

      await waitForSettled(db.pool, 60000);
      const { rows } = await db.pool.query('SELECT id, delivery_status FROM events WHERE id = ANY($1)', [events]);
      expect(rows).toHaveLength(30);
      expect(rows.filter((row) => row.delivery_status !== 'delivered')).toEqual([]);
      const counts = countById(receiver.received.map((r) => String(r.headers['webhook-id'])));
      expect(events.filter((id) => !counts.has(id))).toEqual([]);
    } finally {
      await t.app.close();
      await receiver.close();
      await db.pool.end().catch(() => undefined);
      await cluster.stop();
    }
  }, 180000);

  it('shares a batch between two instances, never sending one attempt twice at once', async () => {
    const first = await startTestApp({ ...NOTIFY_ENV, NOTIFY_WORKER_CONCURRENCY: '5' });
    const second = await startTestApp({ ...NOTIFY_ENV, NOTIFY_WORKER_CONCURRENCY: '5' }, first.db);
    const receiver = await startReceiver(() => ({ status: 200 }), 50);
    try {
      const merchant = await createMerchant(first);
      const events = await payOrders(first, merchant.testKey, receiver.url, 40);
      await waitForSettled(first.db.pool);
      const counts = countById(receiver.received.map((r) => String(r.headers['webhook-id'])));
      expect(events.filter((id) => counts.get(id) !== 1)).toEqual([]);
      expect(receiver.maxConcurrentPerId).toBe(1);
      const { rows } = await first.db.pool.query(
        `SELECT count(*)::int AS attempts FROM notification_attempts WHERE event_id = ANY($1)`,
        [events],
      );
      expect(rows[0].attempts).toBe(40);
    } finally {
      await second.close();
      await first.close();
      await receiver.close();
    }
  }, 120000);
});
