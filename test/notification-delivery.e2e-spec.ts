import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { expectError, expectSuccess } from './support/expect-error';
import { createMerchant, createPaidOrder, TestMerchant } from './support/factories';
import { NOTIFY_ENV } from './support/notifications';
import { Answer, Receiver, signedBy, startReceiver, waitFor } from './support/receiver';
import { startTestApp, TestApp } from './support/test-app';
import { EventsRepository } from '../src/notifications/events.repository';

/** Due 0, 300 and 600 ms after the commit: NOTIFY_ENV's delays 0,300ms,300ms, each after the slot before. */
const SCHEDULE_MS = [0, 300, 600];

describe('notification delivery: retries, failures, secrets (docs/notifications.md)', () => {
  let t: TestApp;
  let merchant: TestMerchant;

  beforeAll(async () => {
    t = await startTestApp({ ...NOTIFY_ENV, ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') });
    merchant = await createMerchant(t);
  });
  afterAll(() => t.close());

  /** Pays an order whose notify_url is the receiver's; resolves with its event row once settled. */
  async function paidEvent(receiver: Receiver, path = '/notify', app = t, apiKey = merchant.testKey) {
    const created = await createPaidOrder(app, apiKey, { notify_url: receiver.url.replace('/notify', path) });
    const { rows } = await app.db.pool.query('SELECT id FROM events WHERE order_id = $1', [created.id]);
    await waitFor(app.db.pool, `SELECT delivery_status <> 'pending' AS done FROM events WHERE id = $1`, [rows[0].id]);
    return (await app.db.pool.query('SELECT * FROM events WHERE id = $1', [rows[0].id])).rows[0];
  }
  const attempts = async (eventId: string) =>
    (await t.db.pool.query('SELECT * FROM notification_attempts WHERE event_id = $1 ORDER BY id', [eventId])).rows;

  async function withReceiver<T>(answer: Answer, run: (receiver: Receiver) => Promise<T>): Promise<T> {
    const receiver = await startReceiver(answer);
    try {
      return await run(receiver);
    } finally {
      await receiver.close();
    }
  }

  it('retries 500, 500 on the schedule, then is delivered at the third attempt', () =>
    withReceiver(
      (n) => ({ status: n < 2 ? 500 : 200 }),
      async (receiver) => {
        const event = await paidEvent(receiver);
        expect(event.delivery_status).toBe('delivered');
        const rows = await attempts(event.id);
        expect(rows.map((a) => a.status_code)).toEqual([500, 500, 200]);
        rows.forEach((attempt, slot) => {
          expect(attempt.attempted_at.getTime()).toBeGreaterThanOrEqual(
            event.created_at.getTime() + SCHEDULE_MS[slot] - 5,
          );
        });
        // On an idle server the first attempt starts within a second of the commit.
        expect(rows[0].attempted_at.getTime() - event.created_at.getTime()).toBeLessThan(1000);
        expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([event.id, event.id, event.id]);
        expect(new Set(receiver.received.map((r) => r.body)).size).toBe(1);
        expect(receiver.received.every((r) => signedBy(r, merchant.secrets.test))).toBe(true);
        expect(event.attempts).toBe(3);
      },
    ));

  it('is failed after the last slot when the receiver never answers 2xx', () =>
    withReceiver(
      () => ({ status: 503 }),
      async (receiver) => {
        const event = await paidEvent(receiver);
        expect(event.delivery_status).toBe('failed');
        expect(event.next_attempt_at).toBeNull();
        expect((await attempts(event.id)).map((a) => a.error)).toEqual([
          'unexpected_status',
          'unexpected_status',
          'unexpected_status',
        ]);
        await new Promise((resolve) => setTimeout(resolve, 700));
        expect(receiver.received).toHaveLength(3);
        const api = await t.http().get(`/v1/events/${event.id}`).set('X-Api-Key', merchant.testKey);
        expect(api.body.data.delivery).toMatchObject({ status: 'failed', attempts: 3, next_attempt_at: null });
        expect(api.body.data.delivery.last_attempt).toMatchObject({ status_code: 503, error: 'unexpected_status' });
      },
    ));

  it('counts an answer slower than NOTIFY_TIMEOUT_MS as a failed attempt', () =>
    withReceiver(
      () => undefined,
      async (silent) => {
        const event = await paidEvent(silent);
        expect(event.delivery_status).toBe('failed');
        const rows = await attempts(event.id);
        expect(rows.map((a) => a.error)).toEqual(['timeout', 'timeout', 'timeout']);
        expect(rows.every((a) => a.duration_ms >= 900)).toBe(true);
      },
    ));

  it('after a time without workers, spreads the missed slots out again instead of sending them back to back', async () => {
    // Events recorded while no instance delivers; the workers come back after every slot was due.
    const recorder = await startTestApp({ ...NOTIFY_ENV, NOTIFY_WORKERS: 'off' });
    const receiver = await startReceiver(() => ({ status: 500 }));
    let workers: TestApp | undefined;
    try {
      const owner = await createMerchant(recorder);
      const order = await createPaidOrder(recorder, owner.testKey, { notify_url: receiver.url });
      await new Promise((resolve) => setTimeout(resolve, SCHEDULE_MS[2] + 500));
      workers = await startTestApp(NOTIFY_ENV, recorder.db);
      await waitFor(recorder.db.pool, `SELECT delivery_status = 'failed' AS done FROM events WHERE order_id = $1`, [
        order.id,
      ]);
      expect(receiver.received).toHaveLength(3);
      // Each at least half its delay (300 ms) after the one before: not within a few ms.
      const [first, second, third] = receiver.received.map((r) => r.at);
      expect(second - first).toBeGreaterThanOrEqual(150 - 5);
      expect(third - second).toBeGreaterThanOrEqual(150 - 5);
    } finally {
      await receiver.close();
      await workers?.close();
      await recorder.close();
    }
  });

  it('counts every attempt on the event, also a scheduled one that ended after a redelivery delivered it', async () => {
    const { createServer } = await import('node:http');
    // Slot 0 fails at once; slot 1 is held, and answers 500 only after the redelivery sent
    // meanwhile was answered 200 (and recorded).
    let requests = 0;
    let releaseSlot1: () => void = () => undefined;
    const slot1Answered = new Promise<void>((resolve) => (releaseSlot1 = resolve));
    const server = createServer((request, response) => {
      const n = requests++;
      request.resume();
      request.on('end', () => {
        if (n === 1) return void slot1Answered.then(() => response.writeHead(500).end());
        response.writeHead(n === 0 ? 500 : 200).end();
        if (n === 2) setTimeout(releaseSlot1, 300);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/notify`;
      const order = await createPaidOrder(t, merchant.testKey, { notify_url: url });
      const { rows } = await t.db.pool.query('SELECT id FROM events WHERE order_id = $1', [order.id]);
      const id = rows[0].id as string;
      while (requests < 2) await new Promise((resolve) => setTimeout(resolve, 20));
      await t.http().post(`/v1/events/${id}/redeliver`).set('X-Api-Key', merchant.testKey).expect(202);
      await slot1Answered;
      await waitFor(t.db.pool, 'SELECT count(*) = 3 AS done FROM notification_attempts WHERE event_id = $1', [id]);

      const api = (path: string) => t.http().get(`/v1/events/${id}${path}`).set('X-Api-Key', merchant.testKey);
      const listed = (await api('/attempts')).body.data as { at: string; status_code: number }[];
      expect(listed.map((attempt) => attempt.status_code)).toEqual([500, 500, 200]);
      const { delivery } = (await api('')).body.data;
      expect(delivery.status).toBe('delivered');
      expect(delivery.attempts).toBe(3);
      // The one that started last (the redelivery), though the held slot was recorded after it.
      expect(delivery.last_attempt).toMatchObject({ at: listed[2].at, status_code: 200 });
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('records an attempt once when its recording is retried (a COMMIT whose outcome was unknown)', () =>
    withReceiver(
      () => ({ status: 200 }),
      async (receiver) => {
        const event = await paidEvent(receiver);
        const events = t.app.get(EventsRepository);
        const result = {
          at: new Date(),
          url: receiver.url,
          statusCode: 200,
          error: null,
          durationMs: 12,
          responseBody: '{"ok":true}',
          delivered: true,
        };
        await events.recordRedelivery(event.id, result, undefined);
        await events.recordRedelivery(event.id, result, undefined);
        expect((await attempts(event.id)).map((a) => a.kind)).toEqual(['scheduled', 'redelivery']);
        const { rows } = await t.db.pool.query('SELECT attempts FROM events WHERE id = $1', [event.id]);
        expect(rows[0].attempts).toBe(2);
      },
    ));

  it('follows no redirect: a 3xx is a failed attempt', () =>
    withReceiver(
      (_n, received) => (received.body === '' ? { status: 200 } : { status: 302, headers: { Location: '/ok' } }),
      async (receiver) => {
        const event = await paidEvent(receiver);
        expect(event.delivery_status).toBe('failed');
        expect((await attempts(event.id)).map((a) => a.status_code)).toEqual([302, 302, 302]);
        // Only the three POSTs to notify_url: nothing followed the Location.
        expect(receiver.received).toHaveLength(3);
      },
    ));

  it('keeps 1 KiB of an answer and stops reading at 64 KiB, even of one that never ends', async () => {
    const { createServer } = await import('node:http');
    // An answer that never ends: only the client's read limit lets the attempt finish
    // before its timeout, as delivered.
    const server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        response.writeHead(200);
        const chunk = 'x'.repeat(16 * 1024);
        const stream = setInterval(() => response.write(chunk), 5);
        response.on('close', () => clearInterval(stream));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as { port: number }).port;
      const event = await paidEvent({ url: `http://127.0.0.1:${port}/notify` } as Receiver);
      expect(event.delivery_status).toBe('delivered');
      const [attempt] = await attempts(event.id);
      expect(attempt.response_body).toBe('x'.repeat(1024));
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('counts a 2xx only when its whole answer came in time: a body cut off or still arriving fails, with its status', async () => {
    const { createServer } = await import('node:http');
    // /cut: 200 promising 1000 bytes, 7 sent, then the connection reset. /slow: 200 at
    // once, then one byte every 100 ms, past NOTIFY_TIMEOUT_MS.
    const server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        response.writeHead(200, { 'Content-Length': '1000' });
        if (request.url === '/cut') {
          response.write('partial');
          setTimeout(() => response.destroy(), 50);
        } else {
          const trickle = setInterval(() => response.write('x'), 100);
          response.on('close', () => clearInterval(trickle));
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/notify`;
      for (const [path, error] of [
        ['/cut', 'connection_reset'],
        ['/slow', 'timeout'],
      ]) {
        const event = await paidEvent({ url } as Receiver, path);
        expect(event.delivery_status).toBe('failed');
        const rows = await attempts(event.id);
        expect(rows.map((a) => [a.status_code, a.error])).toEqual([
          [200, error],
          [200, error],
          [200, error],
        ]);
        if (path === '/cut') expect(rows[0].response_body).toBe('partial');
      }
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('records an answer holding NUL bytes once, without them, and is delivered (no resend)', async () => {
    const { createServer } = await import('node:http');
    let posts = 0;
    const server = createServer((request, response) => {
      posts += 1;
      request.resume();
      request.on('end', () => response.writeHead(200).end('ok\u0000binary\u0000'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as { port: number }).port;
      const event = await paidEvent({ url: `http://127.0.0.1:${port}/notify` } as Receiver);
      expect(event.delivery_status).toBe('delivered');
      const recorded = await attempts(event.id);
      expect(recorded.map((attempt) => attempt.response_body)).toEqual(['okbinary']);
      expect(posts).toBe(1);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('stores secrets encrypted under ENCRYPTION_KEY', async () => {
    const { rows } = await t.db.pool.query('SELECT secret FROM notification_secrets WHERE merchant_id = $1', [
      merchant.id,
    ]);
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(row.secret).toMatch(/^enc:v1:/);
      expect(row.secret).not.toContain(merchant.secrets.test.slice(6));
    }
    expect(merchant.secrets.test).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  });

  it('stores the answer of a keyed roll sealed under ENCRYPTION_KEY, and replays the secret it showed', async () => {
    const owner = await createMerchant(t, 'Sealed');
    const key = randomUUID();
    const roll = () =>
      t.http().post('/v1/account/notification_secret/roll').set('X-Api-Key', owner.testKey).set('Idempotency-Key', key);
    const first = await roll();
    expectSuccess(first, 200);
    const secret = first.body.data.secret as string;
    const { rows } = await t.db.pool.query('SELECT response_body FROM idempotency_keys WHERE key = $1', [key]);
    expect(rows).toHaveLength(1);
    expect(rows[0].response_body).toMatch(/^enc:v1:/);
    expect(rows[0].response_body).not.toContain(secret.slice('whsec_'.length));
    const replay = await roll();
    expectSuccess(replay, 200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
    // Under another ENCRYPTION_KEY the answer cannot be opened: a new key is asked for, not a 500.
    const rekeyed = await startTestApp({ ...NOTIFY_ENV, ENCRYPTION_KEY: Buffer.alloc(32, 8).toString('base64') }, t.db);
    try {
      const lost = await rekeyed
        .http()
        .post('/v1/account/notification_secret/roll')
        .set('X-Api-Key', owner.testKey)
        .set('Idempotency-Key', key);
      expectError(lost, 400, 'idempotency_error', 'Idempotency-Key');
      expect(lost.body.message).toMatch(/ENCRYPTION_KEY/);
    } finally {
      await rekeyed.close();
    }
  });

  it('still signs with a secret stored before ENCRYPTION_KEY was set, and gives a merchant without one its first', async () => {
    const plain = await startTestApp({ ...NOTIFY_ENV, NOTIFY_WORKERS: 'off' });
    const [early, bare] = [await createMerchant(plain, 'Early'), await createMerchant(plain, 'Bare')];
    const secretsOf = async (owner: TestMerchant) =>
      (
        await plain.db.pool.query(
          `SELECT secret FROM notification_secrets WHERE merchant_id = $1 AND environment = 'test'`,
          [owner.id],
        )
      ).rows.map((row) => row.secret as string);
    expect(await secretsOf(early)).toEqual([early.secrets.test]);
    // A merchant from before notifications existed has no secret at all.
    await plain.db.pool.query('DELETE FROM notification_secrets WHERE merchant_id = $1', [bare.id]);
    await plain.app.close();

    const keyed = await startTestApp(
      { ...NOTIFY_ENV, ENCRYPTION_KEY: Buffer.alloc(32, 9).toString('base64') },
      plain.db,
    );
    const receiver = await startReceiver(() => ({ status: 200 }));
    try {
      const earlyEvent = await paidEvent(receiver, '/notify', keyed, early.testKey);
      expect(earlyEvent.delivery_status).toBe('delivered');
      const earlyDelivery = receiver.received.find((r) => r.headers['webhook-id'] === earlyEvent.id)!;
      expect(signedBy(earlyDelivery, early.secrets.test)).toBe(true);

      const bareEvent = await paidEvent(receiver, '/notify', keyed, bare.testKey);
      expect(bareEvent.delivery_status).toBe('delivered');
      const given = await secretsOf(bare);
      expect(given).toHaveLength(1);
      expect(given[0]).toMatch(/^enc:v1:/);
      // The merchant learns it by rolling; the secret it was given signs on beside the new one.
      const roll = await keyed
        .http()
        .post('/v1/account/notification_secret/roll')
        .set('X-Api-Key', bare.testKey)
        .set('Idempotency-Key', randomUUID());
      expectSuccess(roll, 200);
      const next = await paidEvent(receiver, '/notify', keyed, bare.testKey);
      const nextDelivery = receiver.received.find((r) => r.headers['webhook-id'] === next.id)!;
      expect(String(nextDelivery.headers['webhook-signature']).split(' ')).toHaveLength(2);
      expect(signedBy(nextDelivery, roll.body.data.secret)).toBe(true);
    } finally {
      await receiver.close();
      await keyed.close();
      await plain.db.drop();
    }
  });

  it('fails attempts as secret_unreadable when no secret opens under ENCRYPTION_KEY, until a roll makes one that does', async () => {
    const sealed = await startTestApp({
      ...NOTIFY_ENV,
      NOTIFY_WORKERS: 'off',
      ENCRYPTION_KEY: Buffer.alloc(32, 10).toString('base64'),
    });
    const owner = await createMerchant(sealed, 'Lost key');
    await sealed.app.close();
    // The key the secrets were sealed under is lost: the server now runs with another.
    const rekeyed = await startTestApp(
      { ...NOTIFY_ENV, ENCRYPTION_KEY: Buffer.alloc(32, 11).toString('base64') },
      sealed.db,
    );
    const receiver = await startReceiver(() => ({ status: 200 }));
    try {
      const lost = await paidEvent(receiver, '/notify', rekeyed, owner.testKey);
      // Not pending for ever: every slot is an attempt that fails, and nothing is sent unsigned.
      expect(lost.delivery_status).toBe('failed');
      const { rows } = await rekeyed.db.pool.query(
        'SELECT error, status_code FROM notification_attempts WHERE event_id = $1 ORDER BY id',
        [lost.id],
      );
      expect(rows).toEqual(Array(3).fill({ error: 'secret_unreadable', status_code: null }));
      expect(receiver.received).toHaveLength(0);
      const api = await rekeyed.http().get(`/v1/events/${lost.id}`).set('X-Api-Key', owner.testKey);
      expect(api.body.data.delivery).toMatchObject({ status: 'failed', attempts: 3 });
      expect(api.body.data.delivery.last_attempt).toMatchObject({ error: 'secret_unreadable', status_code: null });

      // A roll makes a secret the server can open; the unreadable one it retires signs nothing.
      const roll = await rekeyed
        .http()
        .post('/v1/account/notification_secret/roll')
        .set('X-Api-Key', owner.testKey)
        .set('Idempotency-Key', randomUUID());
      expectSuccess(roll, 200);
      const next = await paidEvent(receiver, '/notify', rekeyed, owner.testKey);
      expect(next.delivery_status).toBe('delivered');
      const delivery = receiver.received.find((r) => r.headers['webhook-id'] === next.id)!;
      expect(String(delivery.headers['webhook-signature']).split(' ')).toHaveLength(1);
      expect(signedBy(delivery, roll.body.data.secret)).toBe(true);
    } finally {
      await receiver.close();
      await rekeyed.close();
      await sealed.db.drop();
    }
  });

  // It started as usual, and every attempt for those merchants failed as secret_unreadable.
  it('says at start-up when the secrets stored encrypted cannot be opened: ENCRYPTION_KEY left out or changed', async () => {
    const key = (fill: number) => Buffer.alloc(32, fill).toString('base64');
    const sealed = await startTestApp({ ...NOTIFY_ENV, NOTIFY_WORKERS: 'off', ENCRYPTION_KEY: key(12) });
    const owner = await createMerchant(sealed, 'Key left out');
    await sealed.app.close();
    const warned = jest.spyOn(Logger.prototype, 'warn');
    const warningsOf = async (env: Record<string, string>) => {
      warned.mockClear();
      await (await startTestApp({ ...NOTIFY_ENV, ...env }, sealed.db)).app.close();
      return warned.mock.calls.map(([message]) => String(message)).filter((m) => m.includes('stored encrypted'));
    };
    try {
      const opening = `the newest of the 2 notification secrets stored encrypted \\(of merchant ${owner.id}\\) cannot be opened`;
      expect(await warningsOf({ ENCRYPTION_KEY: '' })).toEqual([
        expect.stringMatching(new RegExp(`^${opening} without ENCRYPTION_KEY, which is not set: `)),
      ]);
      expect(await warningsOf({ ENCRYPTION_KEY: key(13) })).toEqual([
        expect.stringMatching(new RegExp(`^${opening} under the ENCRYPTION_KEY now set: `)),
      ]);
      expect(await warningsOf({ ENCRYPTION_KEY: key(12) })).toEqual([]);
      // Only an instance that delivers signs, so only one says so.
      expect(await warningsOf({ ENCRYPTION_KEY: '', NOTIFY_WORKERS: 'off' })).toEqual([]);
    } finally {
      warned.mockRestore();
      await sealed.db.drop();
    }
  });

  it('rolls the secret: both sign for 24 hours, then only the new one; the other environment is untouched', () =>
    withReceiver(
      () => ({ status: 200 }),
      async (receiver) => {
        const roll = await t
          .http()
          .post('/v1/account/notification_secret/roll')
          .set('X-Api-Key', merchant.testKey)
          .set('Idempotency-Key', randomUUID());
        expectSuccess(roll, 200);
        const fresh = roll.body.data.secret as string;
        expect(roll.body.data).toMatchObject({ object: 'notification_secret', environment: 'test' });
        expect(fresh).toMatch(/^whsec_/);
        expect(fresh).not.toBe(merchant.secrets.test);
        // The answer gives the retired secret's end as stored, not as the server's clock guesses it.
        const retired = await t.db.pool.query(
          `SELECT expires_at FROM notification_secrets
            WHERE merchant_id = $1 AND environment = 'test' AND expires_at IS NOT NULL`,
          [merchant.id],
        );
        expect(roll.body.data.previous_expires_at).toBe(retired.rows[0].expires_at.toISOString());

        const during = await paidEvent(receiver);
        const duringDelivery = receiver.received.find((r) => r.headers['webhook-id'] === during.id)!;
        expect(String(duringDelivery.headers['webhook-signature']).split(' ')).toHaveLength(2);
        expect(signedBy(duringDelivery, merchant.secrets.test)).toBe(true);
        expect(signedBy(duringDelivery, fresh)).toBe(true);

        // 24 hours later: the rolled secret has expired.
        await t.db.pool.query(
          `UPDATE notification_secrets SET expires_at = now() - interval '1 second'
          WHERE merchant_id = $1 AND environment = 'test' AND expires_at IS NOT NULL`,
          [merchant.id],
        );
        const after = await paidEvent(receiver);
        const afterDelivery = receiver.received.find((r) => r.headers['webhook-id'] === after.id)!;
        expect(String(afterDelivery.headers['webhook-signature']).split(' ')).toHaveLength(1);
        expect(signedBy(afterDelivery, fresh)).toBe(true);
        expect(signedBy(afterDelivery, merchant.secrets.test)).toBe(false);

        const { rows } = await t.db.pool.query(
          `SELECT count(*)::int AS n FROM notification_secrets WHERE merchant_id = $1 AND environment = 'live'`,
          [merchant.id],
        );
        expect(rows[0].n).toBe(1);
      },
    ));

  it('refuses a roll without an API key', async () => {
    expectError(await t.http().post('/v1/account/notification_secret/roll'), 401, 'api_key_missing', 'X-Api-Key');
  });

  it('renews the lease of the pool that holds a job, so a slow attempt is never taken from a live instance', async () => {
    const app = await startTestApp({ ...NOTIFY_ENV, NOTIFY_TIMEOUT_MS: '5000' });
    const receiver = await startReceiver(() => ({ status: 200 }), 2000);
    try {
      const owner = await createMerchant(app);
      await createPaidOrder(app, owner.testKey, { notify_url: receiver.url });
      // While the receiver holds the attempt, its job is locked by the instance's pool …
      const locked = 'SELECT locked_by FROM graphile_worker.jobs WHERE locked_by IS NOT NULL';
      await waitFor(app.db.pool, `SELECT count(*) > 0 AS done FROM (${locked}) AS held`);
      const holder = (await app.db.pool.query(locked)).rows[0].locked_by as string;
      // … and that pool's lease is what the heartbeat renews: no other instance unlocks it.
      const { rows } = await app.db.pool.query(
        `SELECT seen_at > now() - interval '20 seconds' AS live FROM notification_workers WHERE worker_id = $1`,
        [holder],
      );
      expect(rows).toEqual([{ live: true }]);
    } finally {
      await receiver.close();
      await app.close();
    }
  });
});
