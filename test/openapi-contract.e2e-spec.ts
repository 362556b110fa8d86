import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { expectError, expectSuccess } from './support/expect-error';
import { orderBody } from './support/factories';
import { injectFault } from './support/faults';
import { Checked, expectConforming, expectRefusedByBoth, OpenApiContract } from './support/openapi-contract';
import { ADMIN_TOKEN, startTestApp, TestApp } from './support/test-app';
import { newEventId, SECRET, WEBHOOK_ENV } from './support/webhooks';

/**
 * Real traffic against the served document (docs/decisions.md, "The OpenAPI document"):
 * the README walk-through and a request of every error class go through a validator of
 * requests and answers built from /docs-json, and any violation fails.
 */
describe('the OpenAPI document as a contract for real traffic', () => {
  let t: TestApp;
  let api: OpenApiContract;
  let key: string;
  let liveKey: string;

  beforeAll(async () => {
    t = await startTestApp(WEBHOOK_ENV);
    api = await OpenApiContract.load(t);
    const merchant = expectConforming(
      await api.send({
        method: 'post',
        path: '/v1/admin/merchants',
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
        body: { name: 'Acme' },
      }),
    );
    expect(merchant.status).toBe(201);
    key = merchant.body.data.api_keys.test;
    liveKey = merchant.body.data.api_keys.live;
  });
  afterAll(() => t.close());

  const keyed = (extra: Record<string, string> = {}) => ({ 'X-Api-Key': key, ...extra });
  const createOrder = (body: object | string, headers: Record<string, string> = {}) =>
    api.send({ method: 'post', path: '/v1/orders', headers: keyed(headers), body });
  const createRefund = (body: object) => api.send({ method: 'post', path: '/v1/refunds', headers: keyed(), body });

  function webhook(type: string, data: object, options: { id?: string; signature?: string } = {}): Promise<Checked> {
    const id = options.id ?? newEventId();
    const raw = JSON.stringify({ id, type, created_at: new Date().toISOString(), data });
    const now = new Date();
    return api.send({
      method: 'post',
      path: '/v1/webhooks/kukopay',
      headers: {
        'Content-Type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
        'webhook-signature': options.signature ?? new Webhook(SECRET).sign(id, now, raw),
      },
      body: raw,
    });
  }

  it('holds for the README walk-through, step by step', async () => {
    expectSuccess(expectConforming(await api.send({ method: 'get', path: '/v1/account', headers: keyed() })), 200);

    const idempotencyKey = randomUUID();
    const body = orderBody();
    const created = expectConforming(await createOrder(body, { 'Idempotency-Key': idempotencyKey }));
    expectSuccess(created, 201);
    expect(created.headers.location).toBe(`/v1/orders/${created.body.data.id}`);
    const replayed = expectConforming(await createOrder(body, { 'Idempotency-Key': idempotencyKey }));
    expect(replayed.status).toBe(201);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.headers['x-request-id']).toBe(created.headers['x-request-id']);

    const mismatch = expectConforming(
      await createOrder({ ...body, amount: 2991 }, { 'Idempotency-Key': idempotencyKey }),
    );
    expectError(mismatch, 400, 'idempotency_error', 'Idempotency-Key');
    const repeated = expectConforming(await createOrder({ ...body, amount: 2991 }));
    expectSuccess(repeated, 200);
    expect(repeated.body.data.amount).toBe(2990);

    const id = created.body.data.id as string;
    for (const path of [`/v1/orders/${id}`, `/v1/orders?out_trade_no=${body.out_trade_no}`, '/v1/orders?limit=10']) {
      expectSuccess(expectConforming(await api.send({ method: 'get', path, headers: keyed() })), 200);
    }
    const page = expectConforming(
      await api.send({ method: 'get', path: `/v1/orders?limit=1&starting_after=${id}`, headers: keyed() }),
    );
    expect(page.body.has_more).toBe(false);
    const closed = expectConforming(
      await api.send({ method: 'post', path: `/v1/orders/${id}/close`, headers: keyed() }),
    );
    expectSuccess(closed, 200);
    expect(closed.body.data.status).toBe('closed');

    const order = expectConforming(await createOrder(orderBody())).body.data;
    const payment = { order_id: order.id, amount: 2990, currency: 'USD', provider_payment_id: 'pay_1' };
    const eventId = newEventId();
    const paid = expectConforming(await webhook('payment.succeeded', payment, { id: eventId }));
    expect(paid.body.data).toEqual({ received: true, duplicate: false, status: 'processed' });
    const again = expectConforming(await webhook('payment.succeeded', payment, { id: eventId }));
    expect(again.body.data).toEqual({ received: true, duplicate: true });

    const refund = expectConforming(
      await createRefund({ order_id: order.id, amount: 1000, out_refund_no: `RF_${eventId}` }),
    );
    expectSuccess(refund, 201);
    const exceeded = expectConforming(
      await createRefund({ order_id: order.id, amount: 2000, out_refund_no: `RF2_${eventId}` }),
    );
    expectError(exceeded, 400, 'refund_amount_exceeded', 'amount');
    const settled = expectConforming(await webhook('refund.succeeded', { refund_id: refund.body.data.id }));
    expect(settled.body.data.status).toBe('processed');
    for (const path of [
      `/v1/refunds/${refund.body.data.id}`,
      `/v1/refunds?out_refund_no=RF_${eventId}`,
      `/v1/orders/${order.id}/refunds?limit=5`,
    ]) {
      expectSuccess(expectConforming(await api.send({ method: 'get', path, headers: keyed() })), 200);
    }
    expectConforming(await webhook('payment.failed', { order_id: order.id, failure_code: 'card_declined' }));
    expectConforming(await webhook('refund.failed', { refund_id: refund.body.data.id }));
    expectConforming(await webhook('dispute.created', { anything: 1 }));

    expectError(
      expectRefusedByBoth(await api.send({ method: 'get', path: '/v1/account' })),
      401,
      'api_key_missing',
      'X-Api-Key',
    );
    expectSuccess(expectConforming(await api.send({ method: 'get', path: '/health' })), 200);
    expectSuccess(expectConforming(await api.send({ method: 'get', path: '/health/ready' })), 200);
  });

  it('holds for merchant notifications: test helpers, the events API, a redelivery and a secret roll', async () => {
    const get = async (path: string) => expectConforming(await api.send({ method: 'get', path, headers: keyed() }));
    const post = async (path: string, headers: Record<string, string> = {}) =>
      expectConforming(await api.send({ method: 'post', path, headers: keyed(headers) }));
    const notifyUrl = 'https://merchant.example/kukopay/notify';
    const order = expectConforming(await createOrder(orderBody({ notify_url: notifyUrl }))).body.data;

    const paid = await post(`/v1/test_helpers/orders/${order.id}/pay`, { 'Idempotency-Key': randomUUID() });
    expectSuccess(paid, 200);
    expect(paid.body.data).toMatchObject({ id: order.id, status: 'paid' });
    expectError(await post(`/v1/test_helpers/orders/${order.id}/pay`), 400, 'order_not_payable', 'id');

    const refund = expectConforming(await createRefund({ order_id: order.id, amount: 1000 })).body.data;
    expectSuccess(await post(`/v1/test_helpers/refunds/${refund.id}/succeed`), 200);
    expectError(await post(`/v1/test_helpers/refunds/${refund.id}/fail`), 400, 'refund_not_pending', 'id');
    const other = expectConforming(await createRefund({ order_id: order.id, amount: 500 })).body.data;
    const failed = await post(`/v1/test_helpers/refunds/${other.id}/fail`);
    expectSuccess(failed, 200);
    expect(failed.body.data.status).toBe('failed');

    const page = await get(`/v1/events?order_id=${order.id}`);
    expectSuccess(page, 200);
    expect(page.body.data.map((e: { type: string }) => e.type).sort()).toEqual([
      'order.paid',
      'refund.failed',
      'refund.succeeded',
    ]);
    const paidEvent = page.body.data.find((e: { type: string }) => e.type === 'order.paid');
    expect(paidEvent.data.object).toMatchObject({ id: order.id, object: 'order', status: 'paid' });
    const refundEvent = page.body.data.find((e: { type: string }) => e.type === 'refund.succeeded');
    expect(refundEvent.data.object).toMatchObject({ id: refund.id, object: 'refund', status: 'succeeded' });
    const older = await get(`/v1/events?type=refund.succeeded&limit=1&starting_after=${refundEvent.id}`);
    expectSuccess(older, 200);
    expect(older.body.data.map((e: { id: string }) => e.id)).not.toContain(refundEvent.id);

    const event = await get(`/v1/events/${paidEvent.id}`);
    expectSuccess(event, 200);
    expect(event.body.data.delivery).toMatchObject({ status: 'pending', attempts: 0, last_attempt: null });
    const attempts = await get(`/v1/events/${paidEvent.id}/attempts`);
    expectSuccess(attempts, 200);
    expect(attempts.body).toMatchObject({ data: [], has_more: false });

    const redeliverKey = randomUUID();
    const redelivered = await post(`/v1/events/${paidEvent.id}/redeliver`, { 'Idempotency-Key': redeliverKey });
    expectSuccess(redelivered, 202);
    expect(redelivered.body.data).toMatchObject({ id: paidEvent.id, delivery: { status: 'pending' } });
    const replayed = await post(`/v1/events/${paidEvent.id}/redeliver`, { 'Idempotency-Key': redeliverKey });
    expect(replayed.status).toBe(202);
    expect(replayed.headers['idempotent-replayed']).toBe('true');

    const silent = expectConforming(await createOrder(orderBody())).body.data;
    expectSuccess(await post(`/v1/test_helpers/orders/${silent.id}/pay`), 200);
    const [undeliverable] = (await get(`/v1/events?order_id=${silent.id}`)).body.data;
    expect(undeliverable.delivery.status).toBe('no_destination');
    expectError(await post(`/v1/events/${undeliverable.id}/redeliver`), 400, 'event_not_deliverable', 'id');
    expectError(await get(`/v1/events/evt_${'0'.repeat(32)}`), 404, 'resource_missing', 'id');
    expectError(await get(`/v1/events/evt_${'0'.repeat(32)}/attempts`), 404, 'resource_missing', 'id');
    const badType = await api.send({ method: 'get', path: '/v1/events?type=payment.succeeded', headers: keyed() });
    expectError(expectRefusedByBoth(badType), 400, 'parameter_invalid', 'type');

    const rolled = await post('/v1/account/notification_secret/roll', { 'Idempotency-Key': randomUUID() });
    expectSuccess(rolled, 200);
    expect(rolled.body.data).toMatchObject({ object: 'notification_secret', environment: 'test' });
    const livePay = { method: 'post' as const, path: `/v1/test_helpers/orders/${silent.id}/pay` };
    const live = expectConforming(await api.send({ ...livePay, headers: { 'X-Api-Key': liveKey } }));
    expectError(live, 404, 'route_not_found');
  });

  describe('every error class', () => {
    it('400 malformed requests, which the document refuses too', async () => {
      expectError(
        expectRefusedByBoth(await createOrder(orderBody({ amount: 'abc' }))),
        400,
        'parameter_invalid',
        'amount',
      );
      const { subject: _omitted, ...noSubject } = orderBody();
      expectError(expectRefusedByBoth(await createOrder(noSubject)), 400, 'parameter_missing', 'subject');
      expectError(
        expectRefusedByBoth(await createOrder(orderBody({ amount_cents: 1 }))),
        400,
        'parameter_unknown',
        'amount_cents',
      );
      const broken = await createOrder('{"amount": ', { 'Content-Type': 'application/json' });
      expectError(expectRefusedByBoth(broken), 400, 'invalid_json');
      const both = await createRefund({ order_id: `ord_${'0'.repeat(32)}`, out_trade_no: 'X' });
      expectError(expectRefusedByBoth(both), 400, 'parameter_invalid', 'out_trade_no');
      const longKey = await createOrder(orderBody(), { 'Idempotency-Key': 'k'.repeat(256) });
      expectError(expectRefusedByBoth(longKey), 400, 'idempotency_key_invalid', 'Idempotency-Key');
      const emptyQuoted = await createOrder(orderBody(), { 'Idempotency-Key': '""' });
      expectError(expectRefusedByBoth(emptyQuoted), 400, 'idempotency_key_invalid', 'Idempotency-Key');
      const nul = await api.send({ method: 'get', path: '/v1/orders/ord_%00', headers: keyed() });
      expectError(expectRefusedByBoth(nul), 400, 'parameter_invalid', 'id');
      const closeNul = await api.send({
        method: 'post',
        path: '/v1/orders/ord_x/close',
        headers: keyed(),
        body: { a: '\u0000' },
      });
      // A write that takes no body: the document allows none or {}, as the server does; the
      // field is unknown before its NUL matters.
      expectError(expectRefusedByBoth(closeNul), 400, 'parameter_unknown', 'a');
      const closeEmpty = await api.send({ method: 'post', path: '/v1/orders/ord_x/close', headers: keyed(), body: {} });
      // An id of another form than the document's is never found.
      expectError(expectRefusedByBoth(closeEmpty), 404, 'resource_missing', 'id');
      for (const id of ['.', '..']) {
        const dots = await api.send({ method: 'get', path: `/v1/orders/${id}`, headers: keyed() });
        expect(dots.requestViolations).not.toEqual([]);
      }
      const badLimit = await api.send({ method: 'get', path: '/v1/orders?limit=0', headers: keyed() });
      expectError(expectRefusedByBoth(badLimit), 400, 'parameter_invalid', 'limit');
      // URL forms: what the server refuses the document's pattern refuses, and the reverse.
      for (const url of ['https://u@merchant.example/n', 'https://merchant.example/a b', 'https:///merchant.example']) {
        const refused = await createOrder(orderBody({ notify_url: url }));
        expectError(expectRefusedByBoth(refused), 400, 'parameter_invalid', 'notify_url');
      }
      for (const [field, url] of [
        ['notify_url', 'HTTPS://Merchant.Example:8443/n?x=1'],
        ['return_url', 'HTTP://LOCALHOST:3000/done'],
      ]) {
        expectSuccess(expectConforming(await createOrder(orderBody({ [field]: url }))), 201);
      }
    });

    it('400 refusals of well-formed requests, and their replay', async () => {
      const order = expectConforming(await createOrder(orderBody())).body.data;
      const notPaid = expectConforming(await createRefund({ order_id: order.id }));
      expectError(notPaid, 400, 'order_not_paid', 'order_id');
      expectConforming(await api.send({ method: 'post', path: `/v1/orders/${order.id}/close`, headers: keyed() }));
      const idempotencyKey = randomUUID();
      const close = () =>
        api.send({
          method: 'post',
          path: `/v1/orders/${order.id}/close`,
          headers: keyed({ 'Idempotency-Key': idempotencyKey }),
        });
      expectError(expectConforming(await close()), 400, 'order_not_closable', 'id');
      const replay = expectConforming(await close());
      expect(replay.headers['idempotent-replayed']).toBe('true');
      const payment = { order_id: order.id, amount: 2990, currency: 'USD', provider_payment_id: 'pay_2' };
      const signature = await webhook('payment.succeeded', payment, { signature: 'v1,bm90IGEgc2lnbmF0dXJl' });
      expectError(expectConforming(signature), 400, 'webhook_signature_invalid', 'webhook-signature');
    });

    it('401, 404, 413 and 415', async () => {
      const invalidKey = await api.send({
        method: 'get',
        path: '/v1/account',
        headers: { 'X-Api-Key': 'kuko_test_nope' },
      });
      expectError(expectConforming(invalidKey), 401, 'api_key_invalid', 'X-Api-Key');
      const missing = await api.send({ method: 'get', path: `/v1/orders/ord_${'0'.repeat(32)}`, headers: keyed() });
      expectError(expectConforming(missing), 404, 'resource_missing', 'id');
      const tooLarge = await createOrder(orderBody({ description: 'x'.repeat(70 * 1024) }));
      expect(tooLarge.responseViolations).toEqual([]);
      expectError(tooLarge.response, 413, 'payload_too_large');
      const text = await createOrder('amount=1', { 'Content-Type': 'text/plain' });
      expectError(expectRefusedByBoth(text), 415, 'unsupported_media_type', 'Content-Type');
    });

    it('409 while the key is held, with Retry-After', async () => {
      const merchant = await t.db.pool.query<{ merchant_id: string }>('SELECT merchant_id FROM api_keys LIMIT 1');
      const idempotencyKey = randomUUID();
      const holder = await t.db.pool.connect();
      try {
        await holder.query(`SELECT pg_advisory_lock(hashtextextended($1 || '/' || $2 || '/' || $3, 0))`, [
          merchant.rows[0].merchant_id,
          'test',
          idempotencyKey,
        ]);
        const busy = expectConforming(await createOrder(orderBody(), { 'Idempotency-Key': idempotencyKey }));
        expectError(busy, 409, 'idempotency_in_progress', 'Idempotency-Key');
        expect(busy.headers['retry-after']).toBe('1');
      } finally {
        await holder.query('SELECT pg_advisory_unlock_all()');
        holder.release();
      }
    });

    it('500 and 503 from the database, and 503 for an event that is not ready', async () => {
      let remove = await injectFault(t.db.pool, 'orders', `RAISE EXCEPTION 'injected failure';`);
      try {
        expectError(expectConforming(await createOrder(orderBody())), 500, 'internal_error');
      } finally {
        await remove();
      }
      remove = await injectFault(t.db.pool, 'orders', `RAISE EXCEPTION 'injected outage' USING ERRCODE = '57P03';`);
      try {
        const unavailable = expectConforming(await createOrder(orderBody()));
        expectError(unavailable, 503, 'service_unavailable');
        expect(unavailable.headers['retry-after']).toBe('1');
      } finally {
        await remove();
      }
      const early = await webhook('refund.succeeded', { refund_id: `rf_${'0'.repeat(32)}` });
      expectError(expectConforming(early), 503, 'resource_not_ready', 'data.refund_id');
      expect(early.response.headers['retry-after']).toBe('5');
    });
  });
});
