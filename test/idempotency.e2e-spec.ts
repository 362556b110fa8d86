import type { Test } from 'supertest';
import { randomUUID } from 'node:crypto';
import { lockWaiters, waitForLockWaiters } from './support/database';
import { expectError, expectSuccess } from './support/expect-error';
import { fingerprint } from '../src/idempotency/canonical-json';
import { createMerchant, createOrder, orderBody, postOrder, TestMerchant } from './support/factories';
import { injectFault, killServerMidRequest, waitForAnAdvisoryLock, waitForNoAdvisoryLocks } from './support/faults';
import { startTestApp, TestApp } from './support/test-app';

describe('the Idempotency-Key layer (docs/idempotency.md)', () => {
  let t: TestApp;
  let merchant: TestMerchant;

  beforeAll(async () => {
    t = await startTestApp();
    // Listening, so that supertest sends every request to this one port: on a server that
    // is not, it listens and closes again for each request, and a close then waits on the
    // connection of a request whose client went away (answered, as a half-closed one is).
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    merchant = await createMerchant(t);
  });
  afterAll(() => t.close());

  const create = (key: string | null, body: object | string, apiKey = merchant.testKey) =>
    postOrder(t, apiKey, body, key ?? undefined);
  const keyRows = async (key: string) =>
    (await t.db.pool.query('SELECT * FROM idempotency_keys WHERE key = $1', [key])).rows;
  const countOrders = async (outTradeNo: string) =>
    (await t.db.pool.query('SELECT count(*)::int AS n FROM orders WHERE out_trade_no = $1', [outTradeNo])).rows[0].n;

  describe('replay', () => {
    it('replays status, body, Location and the original request id, and runs nothing again', async () => {
      const key = randomUUID();
      const body = orderBody();
      const first = await create(key, body);
      expectSuccess(first, 201);
      expect(first.headers['idempotent-replayed']).toBeUndefined();

      const again = await create(key, body);
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.headers['x-request-id']).toBe(first.headers['x-request-id']);
      expect(again.headers.location).toBe(first.headers.location);
      expect(again.headers['content-type']).toBe(first.headers['content-type']);
      expect(again.text).toBe(first.text);
      expect(await countOrders(body.out_trade_no as string)).toBe(1);

      const [row] = await keyRows(key);
      expect(row).toMatchObject({
        merchant_id: merchant.id,
        environment: 'test',
        method: 'POST',
        path: '/v1/orders',
        response_status: 201,
        response_body: first.text,
        request_id: first.body.request_id,
      });
    });

    it('replays the snapshot of the first answer even after the order changed', async () => {
      const key = randomUUID();
      const body = orderBody();
      const first = await create(key, body);
      await t.http().post(`/v1/orders/${first.body.data.id}/close`).set('X-Api-Key', merchant.testKey).expect(200);
      const again = await create(key, body);
      expect(again.text).toBe(first.text);
      expect(again.body.data.status).toBe('pending');
    });

    it('takes the same body with other key order and spacing as the same request', async () => {
      const key = randomUUID();
      const body = orderBody();
      await create(key, body).expect(201);
      const reordered = `{ "subject" : "${body.subject}", "currency":"USD",\n "amount": 2990, "out_trade_no": "${body.out_trade_no}" }`;
      const again = await create(key, reordered);
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
    });

    it('reads the quoted IETF form as the same key, and the header name in any case', async () => {
      const key = randomUUID();
      const body = orderBody();
      await create(key, body).expect(201);
      const quoted = await t
        .http()
        .post('/v1/orders')
        .set('X-Api-Key', merchant.testKey)
        .set('idempotency-KEY', `"${key}"`)
        .send(body);
      expect(quoted.headers['idempotent-replayed']).toBe('true');
    });

    it('ignores the header on GET', async () => {
      const order = await createOrder(t, merchant.testKey);
      const response = await t
        .http()
        .get(`/v1/orders/${order.id}`)
        .set('X-Api-Key', merchant.testKey)
        .set('Idempotency-Key', '');
      expectSuccess(response, 200);
    });
  });

  describe('mismatch', () => {
    it('refuses the key with another body, with a new request id, and keeps the stored answer', async () => {
      const key = randomUUID();
      const body = orderBody();
      const first = await create(key, body);
      const changed = await create(key, { ...body, amount: 2991 });
      expectError(changed, 400, 'idempotency_error', 'Idempotency-Key');
      expect(changed.body.type).toBe('idempotency_error');
      expect(changed.body.request_id).not.toBe(first.body.request_id);
      expect(changed.headers['idempotent-replayed']).toBeUndefined();
      expect((await create(key, body)).text).toBe(first.text);
    });

    it('refuses the key on another endpoint, and on the same route for another order', async () => {
      const key = randomUUID();
      const a = await createOrder(t, merchant.testKey);
      const b = await createOrder(t, merchant.testKey);
      const close = (id: string) =>
        t.http().post(`/v1/orders/${id}/close`).set('X-Api-Key', merchant.testKey).set('Idempotency-Key', key);
      expectSuccess(await close(a.id), 200);
      expectError(await close(b.id), 400, 'idempotency_error', 'Idempotency-Key');
      expectError(await create(key, {}), 400, 'idempotency_error', 'Idempotency-Key');
      const status = await t.http().get(`/v1/orders/${b.id}`).set('X-Api-Key', merchant.testKey);
      expect(status.body.data.status).toBe('pending');
    });
  });

  describe('scope', () => {
    it('keeps keys apart per merchant and per environment', async () => {
      const key = randomUUID();
      const other = await createMerchant(t, 'Other');
      const test = await create(key, orderBody());
      const live = await create(key, orderBody(), merchant.liveKey);
      const foreign = await create(key, orderBody(), other.testKey);
      for (const response of [test, live, foreign]) {
        expectSuccess(response, 201);
        expect(response.headers['idempotent-replayed']).toBeUndefined();
      }
      expect(await keyRows(key)).toHaveLength(3);
    });
  });

  describe('what is stored', () => {
    it('stores a validation error: the retry replays it and nothing is created', async () => {
      const key = randomUUID();
      const body = orderBody({ amount: -1 });
      const first = await create(key, body);
      expectError(first, 400, 'parameter_invalid', 'amount');
      const again = await create(key, body);
      expect(again.status).toBe(400);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.text).toBe(first.text);
      expect(await countOrders(body.out_trade_no as string)).toBe(0);
      expect((await keyRows(key))[0].response_status).toBe(400);
    });

    it('stores a 404 and a business refusal', async () => {
      const missing = randomUUID();
      const close = (id: string, key: string) =>
        t.http().post(`/v1/orders/${id}/close`).set('X-Api-Key', merchant.testKey).set('Idempotency-Key', key);
      expectError(await close('ord_00000000000000000000000000000000', missing), 404, 'resource_missing', 'id');
      expect((await close('ord_00000000000000000000000000000000', missing)).headers['idempotent-replayed']).toBe(
        'true',
      );

      const order = await createOrder(t, merchant.testKey);
      await close(order.id, randomUUID()).expect(200);
      const refused = randomUUID();
      expectError(await close(order.id, refused), 400, 'order_not_closable', 'id');
      expect((await keyRows(refused))[0].response_status).toBe(400);
    });

    it('stores the refusal of a body sent to a write that takes none', async () => {
      const order = await createOrder(t, merchant.testKey);
      const key = randomUUID();
      const close = () =>
        t.http().post(`/v1/orders/${order.id}/close`).set('X-Api-Key', merchant.testKey).set('Idempotency-Key', key);
      const first = await close().send({ foo: 1 });
      expectError(first, 400, 'parameter_unknown', 'foo');
      const again = await close().send({ foo: 1 });
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.text).toBe(first.text);
      // The key belongs to the refused request: without the body it is another request.
      expectError(await close(), 400, 'idempotency_error', 'Idempotency-Key');
      const { body } = await t.http().get(`/v1/orders/${order.id}`).set('X-Api-Key', merchant.testKey);
      expect(body.data.status).toBe('pending');
    });

    it('tells a body of null apart from no body: each is its own request under a key', async () => {
      const order = await createOrder(t, merchant.testKey);
      const key = randomUUID();
      const close = () =>
        t.http().post(`/v1/orders/${order.id}/close`).set('X-Api-Key', merchant.testKey).set('Idempotency-Key', key);
      expectSuccess(await close(), 200);
      const withNull = await close().set('Content-Type', 'application/json').send('null');
      expectError(withNull, 400, 'idempotency_error', 'Idempotency-Key');

      // The other way round: the refusal of a null body is not the answer to {}.
      const other = randomUUID();
      const create = (body: string) =>
        t
          .http()
          .post('/v1/orders')
          .set('X-Api-Key', merchant.testKey)
          .set('Idempotency-Key', other)
          .set('Content-Type', 'application/json')
          .send(body);
      expectError(await create('null'), 400, 'parameter_invalid', null);
      expectError(await create('{}'), 400, 'idempotency_error', 'Idempotency-Key');
    });

    it('does not store answers that are not the request’s own result', async () => {
      const cases: [string, () => Test, number, string][] = [
        [
          'no api key',
          () => t.http().post('/v1/orders').set('Idempotency-Key', 'nostore-401').send(orderBody()),
          401,
          'api_key_missing',
        ],
        [
          'bad json',
          () =>
            t
              .http()
              .post('/v1/orders')
              .set('X-Api-Key', merchant.testKey)
              .set('Idempotency-Key', 'nostore-json')
              .set('Content-Type', 'application/json')
              .send('{'),
          400,
          'invalid_json',
        ],
        [
          'wrong type',
          () =>
            t
              .http()
              .post('/v1/orders')
              .set('X-Api-Key', merchant.testKey)
              .set('Idempotency-Key', 'nostore-415')
              .set('Content-Type', 'text/plain')
              .send('x'),
          415,
          'unsupported_media_type',
        ],
        [
          'too large',
          () =>
            t
              .http()
              .post('/v1/orders')
              .set('X-Api-Key', merchant.testKey)
              .set('Idempotency-Key', 'nostore-413')
              .send(orderBody({ subject: 'x'.repeat(70000) })),
          413,
          'payload_too_large',
        ],
      ];
      for (const [, send, status, error] of cases) {
        expect((await send()).body.error).toBe(error);
        expect((await send()).status).toBe(status);
      }
      const { rows } = await t.db.pool.query(`SELECT key FROM idempotency_keys WHERE key LIKE 'nostore-%'`);
      expect(rows).toEqual([]);
    });

    it.each([
      ['empty', ''],
      ['over 255 characters', 'k'.repeat(256)],
      ['a control character', 'a\tb'],
      ['non-ASCII', 'clé'],
    ])('refuses a key that is %s and stores nothing', async (_, key) => {
      const body = orderBody();
      const response = await create(key, body);
      expectError(response, 400, 'idempotency_key_invalid', 'Idempotency-Key');
      expect(await countOrders(body.out_trade_no as string)).toBe(0);
    });

    it('refuses the header sent twice', async () => {
      const body = orderBody();
      const response = await t
        .http()
        .post('/v1/orders')
        .set('X-Api-Key', merchant.testKey)
        .set('Idempotency-Key', ['twice', 'twice'] as unknown as string)
        .send(body);
      expectError(response, 400, 'idempotency_key_invalid', 'Idempotency-Key');
      expect(await countOrders(body.out_trade_no as string)).toBe(0);
    });

    it('stores nothing on a 5xx, rolls the writes back, and a retry really executes', async () => {
      const key = randomUUID();
      const body = orderBody();
      // A real database failure mid-request: the order insert kills its own connection.
      const restore = await injectFault(
        t.db.pool,
        'orders',
        `IF NEW.out_trade_no = '${body.out_trade_no}' THEN PERFORM pg_terminate_backend(pg_backend_pid()); END IF;`,
      );
      try {
        const failed = await create(key, body);
        expect(failed.status).toBeGreaterThanOrEqual(500);
        expect(failed.body.type).toBe('api_error');
        expect(await keyRows(key)).toEqual([]);
        expect(await countOrders(body.out_trade_no as string)).toBe(0);
      } finally {
        await restore();
      }
      const retried = await create(key, body);
      expectSuccess(retried, 201);
      expect(retried.headers['idempotent-replayed']).toBeUndefined();
      expect(await countOrders(body.out_trade_no as string)).toBe(1);
    });
  });

  describe('in progress', () => {
    it('answers 409 at once while the key is held, then the final result', async () => {
      const key = randomUUID();
      const body = orderBody();
      // Hold the key's lock as a running request would.
      const holder = await t.db.pool.connect();
      try {
        await holder.query(`SELECT pg_advisory_lock(hashtextextended($1 || '/' || $2 || '/' || $3, 0))`, [
          merchant.id,
          'test',
          key,
        ]);
        const busy = await create(key, body);
        expectError(busy, 409, 'idempotency_in_progress', 'Idempotency-Key');
        expect(busy.headers['retry-after']).toBe('1');
        expect(await countOrders(body.out_trade_no as string)).toBe(0);
      } finally {
        await holder.query('SELECT pg_advisory_unlock_all()');
        holder.release();
      }
      expectSuccess(await create(key, body), 201);
    });

    it('answers 409 at once even when the merchant has no free write slot to wait for', async () => {
      // Four connections: three write slots, of which one merchant may hold two.
      const small = await startTestApp({ DATABASE_POOL_SIZE: '4' });
      const holder = await small.db.pool.connect();
      const keyHolder = await small.db.pool.connect();
      let closes: Promise<unknown>[] = [];
      try {
        const owner = await createMerchant(small);
        const order = await createOrder(small, owner.testKey);
        await holder.query('BEGIN');
        await holder.query('SELECT 1 FROM orders WHERE id = $1 FOR UPDATE', [order.id]);
        // Two closes queue on the locked row, holding the merchant's two slots.
        closes = [0, 1].map(() =>
          small
            .http()
            .post(`/v1/orders/${order.id}/close`)
            .set('X-Api-Key', owner.testKey)
            .then(
              (response) => response,
              () => null,
            ),
        );
        await waitForLockWaiters(small.db.pool, 2);
        const key = randomUUID();
        await keyHolder.query(`SELECT pg_advisory_lock(hashtextextended($1 || '/' || $2 || '/' || $3, 0))`, [
          owner.id,
          'test',
          key,
        ]);
        const twin = await postOrder(small, owner.testKey, orderBody(), key);
        // Said at once: while the closes still hold the slots, not once they gave up.
        expectError(twin, 409, 'idempotency_in_progress', 'Idempotency-Key');
        expect(await lockWaiters(small.db.pool)).toBe(2);
      } finally {
        await holder.query('ROLLBACK').catch(() => undefined);
        holder.release();
        await keyHolder.query('SELECT pg_advisory_unlock_all()');
        keyHolder.release();
        await Promise.all(closes);
        await small.close();
      }
    });

    it('executes 30 concurrent identical requests exactly once', async () => {
      const key = randomUUID();
      const body = orderBody();
      const responses = await Promise.all(Array.from({ length: 30 }, () => create(key, body)));
      const statuses = responses.map((r) => r.status);
      expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
      const executed = responses.filter((r) => r.status === 201 && !r.headers['idempotent-replayed']);
      expect(executed).toHaveLength(1);
      for (const replay of responses.filter((r) => r.headers['idempotent-replayed'])) {
        expect(replay.text).toBe(executed[0].text);
      }
      expect(await countOrders(body.out_trade_no as string)).toBe(1);
      expect(await keyRows(key)).toHaveLength(1);
    });

    it('executes once across two instances on one database', async () => {
      const second = await startTestApp({}, t.db);
      try {
        const key = randomUUID();
        const body = orderBody();
        const responses = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            (i % 2 ? second : t)
              .http()
              .post('/v1/orders')
              .set('X-Api-Key', merchant.testKey)
              .set('Idempotency-Key', key)
              .send(body),
          ),
        );
        expect(responses.every((r) => r.status === 201 || r.status === 409)).toBe(true);
        expect(responses.filter((r) => r.status === 201 && !r.headers['idempotent-replayed'])).toHaveLength(1);
        expect(await countOrders(body.out_trade_no as string)).toBe(1);
      } finally {
        await second.close();
      }
    });
  });

  describe('expiry', () => {
    const expire = (key: string) =>
      t.db.pool.query(`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = $1`, [key]);

    it('sets expires_at from IDEMPOTENCY_TTL_SECONDS', async () => {
      const key = randomUUID();
      await create(key, orderBody()).expect(201);
      const [row] = await keyRows(key);
      const ttl = (row.expires_at.getTime() - row.created_at.getTime()) / 1000;
      expect(ttl).toBe(86400);
    });

    it('treats an expired key as never seen, before any purge', async () => {
      const key = randomUUID();
      const first = await create(key, orderBody());
      await expire(key);
      const fresh = await create(key, orderBody({ subject: 'Another order' }));
      expectSuccess(fresh, 201);
      expect(fresh.headers['idempotent-replayed']).toBeUndefined();
      expect(fresh.body.data.id).not.toBe(first.body.data.id);
      const rows = await keyRows(key);
      expect(rows).toHaveLength(1);
      expect(rows[0].request_id).toBe(fresh.body.request_id);
    });

    it('executes once when two requests race for an expired key', async () => {
      const key = randomUUID();
      await create(key, orderBody());
      await expire(key);
      const body = orderBody();
      const responses = await Promise.all(Array.from({ length: 10 }, () => create(key, body)));
      expect(responses.every((r) => r.status === 201 || r.status === 409)).toBe(true);
      expect(responses.filter((r) => r.status === 201 && !r.headers['idempotent-replayed'])).toHaveLength(1);
      expect(await countOrders(body.out_trade_no as string)).toBe(1);
    });

    it('honours a configured TTL', async () => {
      const short = await startTestApp({ IDEMPOTENCY_TTL_SECONDS: '60' }, t.db);
      try {
        const key = randomUUID();
        await short
          .http()
          .post('/v1/orders')
          .set('X-Api-Key', merchant.testKey)
          .set('Idempotency-Key', key)
          .send(orderBody())
          .expect(201);
        const [row] = await keyRows(key);
        expect((row.expires_at.getTime() - row.created_at.getTime()) / 1000).toBe(60);
      } finally {
        await short.close();
      }
    });
  });

  describe('a competitor that stores the key after our claim read it', () => {
    it('rolls our writes back and replays the competitor’s answer', async () => {
      const key = randomUUID();
      const body = orderBody();
      const restore = await injectFault(
        t.db.pool,
        'orders',
        `IF NEW.out_trade_no = '${body.out_trade_no}' THEN PERFORM pg_sleep(0.5); END IF;`,
      );
      try {
        const ours = create(key, body).then((r) => r);
        // While our request runs (it holds the lock), an answer for the key commits, as
        // one whose commit our claim's snapshot could not see would.
        await waitForAnAdvisoryLock(t.db.pool);
        const theirs = JSON.stringify({ data: { id: 'ord_theirs' }, request_id: 'req_theirs' });
        await t.db.pool.query(
          `INSERT INTO idempotency_keys (merchant_id, environment, key, method, path, fingerprint,
                                         response_status, response_body, request_id, expires_at)
           VALUES ($1, 'test', $2, 'POST', '/v1/orders', $3, 201, $4, 'req_theirs', now() + interval '1 hour')`,
          [merchant.id, key, fingerprint(body), theirs],
        );
        const response = await ours;
        expect(response.status).toBe(201);
        expect(response.headers['idempotent-replayed']).toBe('true');
        expect(response.headers['x-request-id']).toBe('req_theirs');
        expect(response.text).toBe(theirs);
        expect(await countOrders(body.out_trade_no as string)).toBe(0);
      } finally {
        await restore();
      }
    });
  });

  describe('deadlocks', () => {
    it('retries a transaction PostgreSQL aborted as a deadlock instead of answering 500', async () => {
      const [a, b] = [orderBody(), orderBody()];
      // Two inserts that take two locks in opposite orders: PostgreSQL aborts one (40P01).
      const restore = await injectFault(
        t.db.pool,
        'orders',
        `IF NEW.out_trade_no = '${a.out_trade_no}' THEN
           PERFORM pg_advisory_xact_lock(4242001); PERFORM pg_sleep(0.3); PERFORM pg_advisory_xact_lock(4242002);
         ELSIF NEW.out_trade_no = '${b.out_trade_no}' THEN
           PERFORM pg_advisory_xact_lock(4242002); PERFORM pg_sleep(0.3); PERFORM pg_advisory_xact_lock(4242001);
         END IF;`,
      );
      try {
        const responses = await Promise.all([create(randomUUID(), a), create(null, b)]);
        expect(responses.map((r) => r.status)).toEqual([201, 201]);
        expect(await countOrders(a.out_trade_no as string)).toBe(1);
        expect(await countOrders(b.out_trade_no as string)).toBe(1);
      } finally {
        await restore();
      }
    });
  });

  describe('a conflict that outlasts the retries', () => {
    /** Every insert of this out_trade_no fails as a serialization failure (40001). */
    const alwaysConflicting = (outTradeNo: string) =>
      injectFault(
        t.db.pool,
        'orders',
        `IF NEW.out_trade_no = '${outTradeNo}' THEN RAISE EXCEPTION 'conflict' USING ERRCODE = '40001'; END IF;`,
      );

    it('answers a keyed request 409 with Retry-After, and stores nothing under the key', async () => {
      const key = randomUUID();
      const body = orderBody();
      const restore = await alwaysConflicting(body.out_trade_no as string);
      try {
        const response = await create(key, body);
        expectError(response, 409, 'idempotency_in_progress', 'Idempotency-Key');
        expect(response.headers['retry-after']).toBe('1');
        expect(await keyRows(key)).toHaveLength(0);
      } finally {
        await restore();
      }
      expectSuccess(await create(key, body), 201);
    });

    it('answers a request without a key 503, never advice about a key it did not send', async () => {
      const body = orderBody();
      const restore = await alwaysConflicting(body.out_trade_no as string);
      try {
        const response = await create(null, body);
        expectError(response, 503, 'service_unavailable');
        expect(response.body.type).toBe('api_error');
        expect(response.body.message).not.toMatch(/Idempotency-Key/);
        expect(response.headers['retry-after']).toBe('1');
        expect(await countOrders(body.out_trade_no as string)).toBe(0);
      } finally {
        await restore();
      }
    });
  });

  describe('a plan that stays stale (a schema change PostgreSQL keeps refusing)', () => {
    it('answers 503 naming the schema change, keyed or not, after the retries, and stores nothing', async () => {
      const [keyed, unkeyed] = [orderBody(), orderBody()];
      const restore = await injectFault(
        t.db.pool,
        'orders',
        `IF NEW.out_trade_no IN ('${keyed.out_trade_no}', '${unkeyed.out_trade_no}') THEN
           RAISE EXCEPTION 'cached plan must not change result type' USING ERRCODE = '0A000';
         END IF;`,
      );
      const key = randomUUID();
      try {
        for (const response of [await create(key, keyed), await create(null, unkeyed)]) {
          expectError(response, 503, 'service_unavailable');
          expect(response.body.message).toMatch(/schema changed/);
          expect(response.headers['retry-after']).toBe('1');
        }
        expect(await keyRows(key)).toHaveLength(0);
        expect(await countOrders(keyed.out_trade_no as string)).toBe(0);
      } finally {
        await restore();
      }
      expectSuccess(await create(key, keyed), 201);
    });
  });

  describe('crashes and disconnects', () => {
    /** Makes inserts of one out_trade_no take `seconds`, so a request can be caught mid-way. */
    const slowInsert = (outTradeNo: string, seconds: number) =>
      injectFault(
        t.db.pool,
        'orders',
        `IF NEW.out_trade_no = '${outTradeNo}' THEN PERFORM pg_sleep(${seconds}); END IF;`,
      );

    it('completes and commits a request whose client went away; the retry gets the replay', async () => {
      const key = randomUUID();
      const body = orderBody();
      const restore = await slowInsert(body.out_trade_no as string, 1);
      try {
        // supertest sends on then(); the client gives up after 100 ms.
        const gaveUp = create(key, body)
          .timeout(100)
          .then(
            () => 'answered',
            (error: Error) => error.message,
          );
        await waitForAnAdvisoryLock(t.db.pool);
        expect(await gaveUp).toMatch(/Timeout/);
        // The first request is still running: its key is held.
        expectError(await create(key, body), 409, 'idempotency_in_progress', 'Idempotency-Key');
        await waitForNoAdvisoryLocks(t.db.pool);
        const retry = await create(key, body);
        expect(retry.status).toBe(201);
        expect(retry.headers['idempotent-replayed']).toBe('true');
        expect(await countOrders(body.out_trade_no as string)).toBe(1);
      } finally {
        await restore();
      }
    });

    it('a server killed mid-request leaves neither an order without its answer nor the reverse', async () => {
      const key = randomUUID();
      const body = orderBody();
      const restore = await slowInsert(body.out_trade_no as string, 1);
      try {
        await killServerMidRequest({
          pool: t.db.pool,
          env: { DATABASE_URL: t.db.url },
          path: '/v1/orders',
          apiKey: merchant.testKey,
          idempotencyKey: key,
          body,
        });
        const orders = await countOrders(body.out_trade_no as string);
        const keys = (await keyRows(key)).length;
        expect([orders, keys]).toEqual([0, 0]);
      } finally {
        await restore();
      }
      const retried = await create(key, body);
      expectSuccess(retried, 201);
      expect(await countOrders(body.out_trade_no as string)).toBe(1);
      expect(await keyRows(key)).toHaveLength(1);
    });
  });
});
