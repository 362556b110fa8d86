import { randomUUID } from 'node:crypto';
import { expectError, expectSuccess } from './support/expect-error';
import { injectFault, killServerMidRequest } from './support/faults';
import { createMerchant, createOrder, createPaidOrder, TestMerchant } from './support/factories';
import { startTestApp, TestApp } from './support/test-app';
import { deliverEvent, newEventId, WEBHOOK_ENV } from './support/webhooks';

const REFUND_KEYS = [
  'amount',
  'created_at',
  'currency',
  'environment',
  'failed_at',
  'id',
  'object',
  'order_id',
  'out_refund_no',
  'reason',
  'status',
  'succeeded_at',
];

describe('partial refunds (docs/refunds.md)', () => {
  let t: TestApp;
  let merchant: TestMerchant;

  beforeAll(async () => {
    t = await startTestApp(WEBHOOK_ENV);
    merchant = await createMerchant(t);
  });
  afterAll(() => t.close());

  const refund = (body: object, key = merchant.testKey) =>
    t.http().post('/v1/refunds').set('X-Api-Key', key).send(body);
  const order = async (id: string) =>
    (await t.http().get(`/v1/orders/${id}`).set('X-Api-Key', merchant.testKey)).body.data;
  const refundSum = async (orderId: string) =>
    Number(
      (
        await t.db.pool.query(
          `SELECT coalesce(sum(amount), 0) AS s FROM refunds WHERE order_id = $1 AND status <> 'failed'`,
          [orderId],
        )
      ).rows[0].s,
    );
  const settle = (refundId: string, type: 'refund.succeeded' | 'refund.failed', id = newEventId()) =>
    deliverEvent(t, {
      id,
      type,
      created_at: new Date().toISOString(),
      data:
        type === 'refund.failed'
          ? { refund_id: refundId, failure_code: 'insufficient_funds', failure_message: 'No' }
          : { refund_id: refundId },
    });

  it('creates a pending refund: 201, the refund object, Location, and the order bookkeeping', async () => {
    const paid = await createPaidOrder(t, merchant.testKey);
    const response = await refund({
      order_id: paid.id,
      amount: 1000,
      out_refund_no: `RF_${randomUUID()}`,
      reason: 'Damaged',
    });
    expectSuccess(response, 201);
    const created = response.body.data;
    expect(Object.keys(created).sort()).toEqual(REFUND_KEYS);
    expect(created).toMatchObject({
      object: 'refund',
      order_id: paid.id,
      amount: 1000,
      currency: 'USD',
      status: 'pending',
      reason: 'Damaged',
      environment: 'test',
      succeeded_at: null,
      failed_at: null,
    });
    expect(created.id).toMatch(/^rf_[0-9a-f]{32}$/);
    expect(response.headers.location).toBe(`/v1/refunds/${created.id}`);
    expect(await order(paid.id)).toMatchObject({ status: 'partially_refunded', amount_refunded: 1000 });
  });

  it('refunds what is still refundable by default, by out_trade_no, and marks the order refunded', async () => {
    const paid = await createPaidOrder(t, merchant.testKey);
    await refund({ order_id: paid.id, amount: 990 }).expect(201);
    const rest = await refund({ out_trade_no: paid.out_trade_no });
    expectSuccess(rest, 201);
    expect(rest.body.data.amount).toBe(2000);
    expect(await order(paid.id)).toMatchObject({ status: 'refunded', amount_refunded: 2990 });
    expectError(await refund({ order_id: paid.id, amount: 1 }), 400, 'order_not_paid', 'order_id');
  });

  it.each([
    ['order_id', 'parameter_missing', {}],
    ['out_trade_no', 'parameter_invalid', { order_id: 'ord_0123456789abcdef0123456789abcdef', out_trade_no: 'X' }],
    ['order_id', 'parameter_invalid', { order_id: 'not-an-id' }],
    ['amount', 'parameter_invalid', { amount: 0 }],
    ['amount', 'parameter_invalid', { amount: 1.5 }],
    ['amount', 'parameter_invalid', { amount: '10' }],
    ['out_refund_no', 'parameter_invalid', { out_refund_no: 'with space' }],
    ['reason', 'parameter_invalid', { reason: 'r'.repeat(501) }],
    ['currency', 'parameter_unknown', { currency: 'USD' }],
  ])('refuses a bad %s with %s (case %#)', async (param, error, body) => {
    const paid = await createPaidOrder(t, merchant.testKey);
    const withOrder =
      'order_id' in body || 'out_trade_no' in body || Object.keys(body).length === 0
        ? body
        : { order_id: paid.id, ...body };
    expectError(await refund(withOrder), 400, error, param);
    expect(await refundSum(paid.id)).toBe(0);
  });

  it('takes an explicit null as invalid, not as absent', async () => {
    const paid = await createPaidOrder(t, merchant.liveKey);
    expectError(
      await refund({ order_id: paid.id, amount: 100, out_refund_no: null }, merchant.liveKey),
      400,
      'parameter_invalid',
      'out_refund_no',
    );
    const nullAmount = await refund({ order_id: paid.id, amount: null, out_refund_no: 'NULL_1' }, merchant.liveKey);
    expectError(nullAmount, 400, 'parameter_invalid', 'amount');
    // Not the integer rule, which the null did not break.
    expect(nullAmount.body.message).toBe('amount must not be null: leave it out, or send a value');
    expectError(
      await refund({ order_id: null, out_trade_no: paid.out_trade_no, out_refund_no: 'NULL_2' }, merchant.liveKey),
      400,
      'parameter_invalid',
      'order_id',
    );
    const { rows } = await t.db.pool.query('SELECT 1 FROM refunds WHERE order_id = $1', [paid.id]);
    expect(rows).toEqual([]);
  });

  it('requires out_refund_no in live', async () => {
    const paid = await createPaidOrder(t, merchant.liveKey);
    expectError(
      await refund({ order_id: paid.id, amount: 1 }, merchant.liveKey),
      400,
      'parameter_missing',
      'out_refund_no',
    );
    expectSuccess(await refund({ order_id: paid.id, amount: 1, out_refund_no: 'LIVE_1' }, merchant.liveKey), 201);
  });

  it('refuses an order that is not paid, and one that does not exist or is another merchant’s', async () => {
    const pending = await createOrder(t, merchant.testKey);
    expectError(await refund({ order_id: pending.id }), 400, 'order_not_paid', 'order_id');
    expectError(await refund({ out_trade_no: pending.out_trade_no }), 400, 'order_not_paid', 'out_trade_no');
    expectError(
      await refund({ order_id: 'ord_0123456789abcdef0123456789abcdef' }),
      404,
      'resource_missing',
      'order_id',
    );
    const other = await createMerchant(t, 'Other');
    const paid = await createPaidOrder(t, merchant.testKey);
    expectError(await refund({ order_id: paid.id }, other.testKey), 404, 'resource_missing', 'order_id');
    expectError(
      await refund({ order_id: paid.id, out_refund_no: 'L1' }, merchant.liveKey),
      404,
      'resource_missing',
      'order_id',
    );
  });

  it('refuses more than is refundable, naming amount', async () => {
    const paid = await createPaidOrder(t, merchant.testKey);
    expectError(await refund({ order_id: paid.id, amount: 2991 }), 400, 'refund_amount_exceeded', 'amount');
    await refund({ order_id: paid.id, amount: 2000 }).expect(201);
    const tooMuch = await refund({ order_id: paid.id, amount: 991 });
    expectError(tooMuch, 400, 'refund_amount_exceeded', 'amount');
    expect(tooMuch.body.message).toBe(
      `The refund of 991 exceeds the 990 still refundable on order ${paid.id} (minor units of USD).`,
    );
    expect(await refundSum(paid.id)).toBe(2000);
    // Larger than any order can be, still only more than is refundable.
    expectError(await refund({ order_id: paid.id, amount: 100000000001 }), 400, 'refund_amount_exceeded', 'amount');
    expectError(await refund({ order_id: paid.id, amount: 2 ** 53 }), 400, 'parameter_invalid', 'amount');
  });

  it('lets exactly two of 10 concurrent refunds of 1000 on a 2990 order through', async () => {
    const paid = await createPaidOrder(t, merchant.testKey);
    const responses = await Promise.all(Array.from({ length: 10 }, () => refund({ order_id: paid.id, amount: 1000 })));
    expect(responses.filter((r) => r.status === 201)).toHaveLength(2);
    const refused = responses.filter((r) => r.status !== 201);
    expect(refused).toHaveLength(8);
    for (const r of refused) expectError(r, 400, 'refund_amount_exceeded', 'amount');
    expect(await refundSum(paid.id)).toBe(2000);
    expect(await order(paid.id)).toMatchObject({ amount_refunded: 2000, status: 'partially_refunded' });
  });

  it('returns the original refund for a repeated out_refund_no, also under concurrency', async () => {
    const paid = await createPaidOrder(t, merchant.testKey);
    const outRefundNo = `RF_${randomUUID()}`;
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => refund({ order_id: paid.id, amount: 500, out_refund_no: outRefundNo })),
    );
    expect(responses.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
    expect(new Set(responses.map((r) => r.body.data.id)).size).toBe(1);
    expect(await refundSum(paid.id)).toBe(500);
    // Later, with other fields: still the original.
    const later = await refund({ order_id: paid.id, amount: 7, out_refund_no: outRefundNo });
    expectSuccess(later, 200);
    expect(later.body.data.amount).toBe(500);
    expect(await order(paid.id)).toMatchObject({ amount_refunded: 500 });
  });

  it('answers concurrent repeats with the original refund even when it leaves too little for another', async () => {
    const paid = await createPaidOrder(t, merchant.testKey);
    const outRefundNo = `RF_${randomUUID()}`;
    const responses = await Promise.all(
      Array.from({ length: 6 }, () => refund({ order_id: paid.id, amount: 2000, out_refund_no: outRefundNo })),
    );
    expect(responses.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 201]);
    expect(new Set(responses.map((r) => r.body.data.id)).size).toBe(1);
    expect(await refundSum(paid.id)).toBe(2000);
    // The same with the default amount, which leaves the order fully refunded.
    const other = await createPaidOrder(t, merchant.testKey);
    const whole = `RF_${randomUUID()}`;
    const all = await Promise.all(
      Array.from({ length: 6 }, () => refund({ order_id: other.id, out_refund_no: whole })),
    );
    expect(all.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 201]);
  });

  // A merchant's retry that names another order by mistake: the out_refund_no decides,
  // whichever of the two is first to commit, not how their orders stand meanwhile.
  it('answers an out_refund_no in use by a refund still being made with that refund, even for another order', async () => {
    const paid = await createPaidOrder(t, merchant.testKey);
    const unpaid = await createOrder(t, merchant.testKey);
    const outRefundNo = `RF_${randomUUID()}`;
    const holder = await t.db.pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM orders WHERE id = $1 FOR UPDATE', [paid.id]);
      // then() sends it now; supertest sends a request only when it is awaited.
      const first = refund({ order_id: paid.id, amount: 500, out_refund_no: outRefundNo }).then((r) => r);
      await new Promise((pause) => setTimeout(pause, 300));
      let secondSettled = false;
      const second = refund({ order_id: unpaid.id, amount: 500, out_refund_no: outRefundNo }).then((r) => {
        secondSettled = true;
        return r;
      });
      await new Promise((pause) => setTimeout(pause, 300));
      expect(secondSettled).toBe(false); // it waits for the first, not refused order_not_paid
      await holder.query('COMMIT');
      const [made, repeated] = await Promise.all([first, second]);
      expectSuccess(made, 201);
      expectSuccess(repeated, 200);
      expect(repeated.body.data).toEqual(made.body.data);
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      holder.release();
    }
  });

  it('gets refunds by id, by out_refund_no, and per order', async () => {
    const paid = await createPaidOrder(t, merchant.testKey);
    const outRefundNo = `RF_${randomUUID()}`;
    const a = (await refund({ order_id: paid.id, amount: 100, out_refund_no: outRefundNo })).body.data;
    const b = (await refund({ order_id: paid.id, amount: 200 })).body.data;
    expect((await t.http().get(`/v1/refunds/${a.id}`).set('X-Api-Key', merchant.testKey)).body.data).toEqual(a);
    expect(
      (await t.http().get(`/v1/refunds?out_refund_no=${outRefundNo}`).set('X-Api-Key', merchant.testKey)).body.data,
    ).toEqual(a);
    const list = await t.http().get(`/v1/orders/${paid.id}/refunds`).set('X-Api-Key', merchant.testKey);
    expectSuccess(list, 200);
    expect(list.body.data.map((r: { id: string }) => r.id)).toEqual([b.id, a.id]);
    expect(list.body.has_more).toBe(false);
    const page = await t.http().get(`/v1/orders/${paid.id}/refunds?limit=1`).set('X-Api-Key', merchant.testKey);
    expect(page.body).toMatchObject({ has_more: true, data: [expect.objectContaining({ id: b.id })] });

    expectError(
      await t.http().get('/v1/refunds/rf_nope').set('X-Api-Key', merchant.testKey),
      404,
      'resource_missing',
      'id',
    );
    expectError(
      await t.http().get(`/v1/refunds/${a.id}`).set('X-Api-Key', merchant.liveKey),
      404,
      'resource_missing',
      'id',
    );
    expectError(
      await t.http().get('/v1/refunds?out_refund_no=NOPE').set('X-Api-Key', merchant.testKey),
      404,
      'resource_missing',
      'out_refund_no',
    );
    expectError(
      await t.http().get('/v1/refunds').set('X-Api-Key', merchant.testKey),
      400,
      'parameter_missing',
      'out_refund_no',
    );
    expectError(
      await t.http().get('/v1/orders/ord_0123456789abcdef0123456789abcdef/refunds').set('X-Api-Key', merchant.testKey),
      404,
      'resource_missing',
      'id',
    );
  });

  describe('settlement by webhooks', () => {
    it('refund.succeeded settles the refund once', async () => {
      const paid = await createPaidOrder(t, merchant.testKey);
      const created = (await refund({ order_id: paid.id, amount: 1000 })).body.data;
      const first = await settle(created.id, 'refund.succeeded');
      expect(first.body.data).toEqual({ received: true, duplicate: false, status: 'processed' });
      const settled = (await t.http().get(`/v1/refunds/${created.id}`).set('X-Api-Key', merchant.testKey)).body.data;
      expect(settled.status).toBe('succeeded');
      expect(settled.succeeded_at).not.toBeNull();
      expect(await order(paid.id)).toMatchObject({ amount_refunded: 1000, status: 'partially_refunded' });

      // Another event settling it again, either way, is ignored.
      expect((await settle(created.id, 'refund.succeeded')).body.data.status).toBe('ignored');
      expect((await settle(created.id, 'refund.failed')).body.data.status).toBe('ignored');
      expect(await order(paid.id)).toMatchObject({ amount_refunded: 1000 });
    });

    it('refund.failed gives the amount back to the order', async () => {
      const paid = await createPaidOrder(t, merchant.testKey);
      const whole = (await refund({ order_id: paid.id })).body.data;
      expect(await order(paid.id)).toMatchObject({ status: 'refunded', amount_refunded: 2990 });
      const failed = await settle(whole.id, 'refund.failed');
      expect(failed.body.data.status).toBe('processed');
      const after = (await t.http().get(`/v1/refunds/${whole.id}`).set('X-Api-Key', merchant.testKey)).body.data;
      expect(after.status).toBe('failed');
      expect(after.failed_at).not.toBeNull();
      expect(await order(paid.id)).toMatchObject({ status: 'paid', amount_refunded: 0 });
      // Refundable again.
      expectSuccess(await refund({ order_id: paid.id, amount: 2990 }), 201);
      expect(await refundSum(paid.id)).toBe(2990);
    });

    it('answers 503 resource_not_ready for an unknown refund, recording nothing', async () => {
      const event = newEventId();
      const response = await settle('rf_0123456789abcdef0123456789abcdef', 'refund.succeeded', event);
      expectError(response, 503, 'resource_not_ready', 'data.refund_id');
      expect(response.headers['retry-after']).toBe('5');
      expect((await t.db.pool.query('SELECT 1 FROM webhook_events WHERE event_id = $1', [event])).rows).toEqual([]);
    });
  });

  describe('with the Idempotency-Key', () => {
    it('replays a keyed refund and never refunds twice', async () => {
      const paid = await createPaidOrder(t, merchant.testKey);
      const key = randomUUID();
      const send = () => refund({ order_id: paid.id, amount: 100 }).set('Idempotency-Key', key);
      const first = await send();
      expectSuccess(first, 201);
      const responses = await Promise.all(Array.from({ length: 10 }, send));
      for (const r of responses) {
        expect(r.status === 409 || (r.status === 201 && r.headers['idempotent-replayed'] === 'true')).toBe(true);
      }
      expect(await refundSum(paid.id)).toBe(100);
      expectError(
        await refund({ order_id: paid.id, amount: 101 }).set('Idempotency-Key', key),
        400,
        'idempotency_error',
        'Idempotency-Key',
      );
    });

    it('stores a business refusal under the key, so a retry cannot change it', async () => {
      const paid = await createPaidOrder(t, merchant.testKey);
      const key = randomUUID();
      const tooMuch = () => refund({ order_id: paid.id, amount: 3000 }).set('Idempotency-Key', key);
      expectError(await tooMuch(), 400, 'refund_amount_exceeded', 'amount');
      const again = await tooMuch();
      expect(again.status).toBe(400);
      expect(again.headers['idempotent-replayed']).toBe('true');
    });

    it('a server killed mid-way through a keyed refund leaves no refund without its stored answer', async () => {
      const paid = await createPaidOrder(t, merchant.testKey);
      const key = randomUUID();
      const body = { order_id: paid.id, amount: 1 };
      const restore = await injectFault(
        t.db.pool,
        'refunds',
        `IF NEW.order_id = '${paid.id}' THEN PERFORM pg_sleep(1); END IF;`,
      );
      try {
        await killServerMidRequest({
          pool: t.db.pool,
          env: { DATABASE_URL: t.db.url, ...WEBHOOK_ENV },
          path: '/v1/refunds',
          apiKey: merchant.testKey,
          idempotencyKey: key,
          body,
        });
        const refunds = await t.db.pool.query('SELECT 1 FROM refunds WHERE order_id = $1', [paid.id]);
        const keys = await t.db.pool.query('SELECT 1 FROM idempotency_keys WHERE key = $1', [key]);
        expect([refunds.rowCount, keys.rowCount]).toEqual([0, 0]);
        expect(await order(paid.id)).toMatchObject({ amount_refunded: 0, status: 'paid' });
      } finally {
        await restore();
      }
      expectSuccess(await refund(body).set('Idempotency-Key', key), 201);
      const replay = await refund(body).set('Idempotency-Key', key);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(await refundSum(paid.id)).toBe(1);
      expect(await order(paid.id)).toMatchObject({ amount_refunded: 1 });
    });
  });
});
