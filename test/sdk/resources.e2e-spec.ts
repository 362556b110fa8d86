import { randomUUID } from 'node:crypto';
import {
  KukoPay,
  KukoPayAuthenticationError,
  KukoPayError,
  KukoPayIdempotencyError,
  KukoPayInvalidRequestError,
  Order,
} from '@kukopay/node';
import { createMerchant, orderBody } from '../support/factories';
import { deliverEvent, paymentSucceeded } from '../support/webhooks';
import { SdkServer, startSdkServer } from './support/sdk-server';

const REQUEST_ID = /^req_[0-9a-f]{32}$/;

/** Every resource method of @kukopay/node that the server has, over real HTTP. */
describe('@kukopay/node against the real server', () => {
  let s: SdkServer;
  let kuko: KukoPay;

  beforeAll(async () => {
    s = await startSdkServer();
    kuko = s.client();
  });
  afterAll(() => s.close());

  const newOrder = () => ({
    out_trade_no: String(orderBody().out_trade_no),
    amount: 2990,
    currency: 'USD',
    subject: 'Annual plan',
  });
  const thrown = (promise: Promise<unknown>) =>
    promise.then(
      () => null,
      (error: unknown) => error as KukoPayError,
    );

  async function pay(order: Order) {
    const paid = await deliverEvent(
      s.t,
      paymentSucceeded(order.id, { amount: order.amount, currency: order.currency }),
    );
    expect(paid.body.data).toMatchObject({ status: 'processed' });
  }

  it('account.retrieve names the merchant and the environment of the key', async () => {
    const account = await kuko.account.retrieve();
    expect(account).toEqual({
      id: s.merchant.id,
      object: 'account',
      name: 'Acme',
      environment: 'test',
      created_at: expect.any(String),
    });
    expect(account.lastResponse).toMatchObject({
      status: 200,
      idempotentReplayed: false,
      idempotencyKey: null,
      attempts: 1,
    });
    expect(account.lastResponse.requestId).toMatch(REQUEST_ID);
    expect((await s.client({}, s.merchant.liveKey).account.retrieve()).environment).toBe('live');
  });

  it('orders.create, retrieve, retrieveByOutTradeNo and close', async () => {
    const params = { ...newOrder(), description: 'Two seats', metadata: { customer: 'c_42' } };
    const order = await kuko.orders.create(params);
    expect(order).toMatchObject({
      ...params,
      object: 'order',
      status: 'pending',
      amount_refunded: 0,
      environment: 'test',
    });
    expect(order.lastResponse).toMatchObject({ status: 201, idempotentReplayed: false, attempts: 1 });
    expect(order.lastResponse.headers.location).toBe(`/v1/orders/${order.id}`);

    expect(await kuko.orders.retrieve(order.id)).toEqual(order);
    expect(await kuko.orders.retrieveByOutTradeNo(params.out_trade_no)).toEqual(order);

    const closed = await kuko.orders.close(order.id);
    expect(closed).toMatchObject({ id: order.id, status: 'closed', closed_at: expect.any(String) });
    const again = await thrown(kuko.orders.close(order.id));
    expect(again).toBeInstanceOf(KukoPayInvalidRequestError);
    expect(again).toMatchObject({ status: 400, code: 'order_not_closable' });
  });

  it('orders.create with a used out_trade_no (and a new key) answers 200 with the original order', async () => {
    const params = newOrder();
    const first = await kuko.orders.create(params);
    const repeat = await kuko.orders.create({ ...params, amount: 1 });
    expect(repeat).toEqual(first);
    expect(repeat.lastResponse).toMatchObject({ status: 200, idempotentReplayed: false });
  });

  it('orders.list pages newest first; for await walks every page', async () => {
    const t2 = await createMerchant(s.t, 'Lister');
    const lister = s.client({}, t2.testKey);
    const created: string[] = [];
    for (let i = 0; i < 23; i++) created.push((await lister.orders.create(newOrder())).id);

    const first = await lister.orders.list({ limit: 10 });
    expect(first.data.map((o) => o.id)).toEqual(created.slice(-10).reverse());
    expect(first.has_more).toBe(true);
    expect(first.lastResponse.status).toBe(200);

    const all: string[] = [];
    for await (const order of lister.orders.list({ limit: 10 })) all.push(order.id);
    expect(all).toEqual([...created].reverse());
  });

  it('refunds.create (by order_id and by out_trade_no), retrieve, retrieveByOutRefundNo and list', async () => {
    const order = await kuko.orders.create(newOrder());
    await pay(order);
    const outRefundNo = `RF_${randomUUID()}`;
    const refund = await kuko.refunds.create({
      order_id: order.id,
      amount: 1000,
      out_refund_no: outRefundNo,
      reason: 'Damaged',
    });
    expect(refund).toMatchObject({
      object: 'refund',
      order_id: order.id,
      amount: 1000,
      out_refund_no: outRefundNo,
      status: 'pending',
    });
    expect(refund.lastResponse.status).toBe(201);
    const rest = await kuko.refunds.create({ out_trade_no: order.out_trade_no });
    expect(rest.amount).toBe(1990);

    expect(await kuko.refunds.retrieve(refund.id)).toEqual(refund);
    expect(await kuko.refunds.retrieveByOutRefundNo(outRefundNo)).toEqual(refund);
    const listed: string[] = [];
    for await (const r of kuko.refunds.list({ order_id: order.id, limit: 1 })) listed.push(r.id);
    expect(listed).toEqual([rest.id, refund.id]);
    expect((await kuko.orders.retrieve(order.id)).status).toBe('refunded');
  });

  it('a refusal is thrown at once with its code and param, and stays the stored answer of its key', async () => {
    const order = await kuko.orders.create(newOrder());
    await pay(order);
    const key = randomUUID();
    const refused = await thrown(kuko.refunds.create({ order_id: order.id, amount: 5000 }, { idempotencyKey: key }));
    expect(refused).toBeInstanceOf(KukoPayInvalidRequestError);
    expect(refused).toMatchObject({
      status: 400,
      code: 'refund_amount_exceeded',
      param: 'amount',
      idempotencyKey: key,
    });
    expect(refused?.requestId).toMatch(REQUEST_ID);

    const replayed = await thrown(kuko.refunds.create({ order_id: order.id, amount: 5000 }, { idempotencyKey: key }));
    expect(replayed).toMatchObject({ code: 'refund_amount_exceeded', requestId: refused?.requestId });
    expect(replayed?.headers['idempotent-replayed']).toBe('true');

    const notPaid = await kuko.orders.create(newOrder());
    expect(await thrown(kuko.refunds.create({ order_id: notPaid.id }))).toMatchObject({ code: 'order_not_paid' });
  });

  it('validation, 404, key misuse and a wrong API key map to their error classes', async () => {
    const invalid = await thrown(kuko.orders.create({ ...newOrder(), amount: 1.5 }));
    expect(invalid).toBeInstanceOf(KukoPayInvalidRequestError);
    expect(invalid).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid', param: 'amount' });

    const missing = await thrown(kuko.orders.retrieve('ord_0123456789abcdef0123456789abcdef'));
    expect(missing).toMatchObject({ status: 404, code: 'resource_missing' });

    const key = randomUUID();
    const params = newOrder();
    await kuko.orders.create(params, { idempotencyKey: key });
    const misuse = await thrown(kuko.orders.create({ ...params, amount: 2991 }, { idempotencyKey: key }));
    expect(misuse).toBeInstanceOf(KukoPayIdempotencyError);
    expect(misuse).toMatchObject({ status: 400, code: 'idempotency_error', param: 'Idempotency-Key' });

    const stranger = await thrown(s.client({}, 'kuko_test_not_a_real_key').account.retrieve());
    expect(stranger).toBeInstanceOf(KukoPayAuthenticationError);
    expect(stranger).toMatchObject({ status: 401, code: 'api_key_invalid' });
  });

  it('testHelpers pay an order and settle its refunds as the provider would; a live key gets 404', async () => {
    const order = await kuko.orders.create(newOrder());
    const paid = await kuko.testHelpers.orders.pay(order.id);
    expect(paid).toMatchObject({ id: order.id, status: 'paid' });
    expect(paid.lastResponse).toMatchObject({ status: 200, idempotencyKey: expect.any(String) });
    const kept = await kuko.refunds.create({ order_id: order.id, amount: 1000 });
    const undone = await kuko.refunds.create({ order_id: order.id, amount: 500 });
    expect(await kuko.testHelpers.refunds.succeed(kept.id)).toMatchObject({ id: kept.id, status: 'succeeded' });
    expect(await kuko.testHelpers.refunds.fail(undone.id)).toMatchObject({ id: undone.id, status: 'failed' });
    expect(await kuko.orders.retrieve(order.id)).toMatchObject({ status: 'partially_refunded', amount_refunded: 1000 });

    const live = s.client({}, s.merchant.liveKey);
    const refused = await thrown(live.testHelpers.orders.pay(order.id));
    expect(refused).toBeInstanceOf(KukoPayInvalidRequestError);
    expect(refused).toMatchObject({ status: 404, code: 'route_not_found' });
  });

  it('account.rollNotificationSecret answers a new secret once; its key replays the same one', async () => {
    const rolled = await kuko.account.rollNotificationSecret({ idempotencyKey: `roll-${randomUUID()}` });
    expect(rolled).toMatchObject({
      object: 'notification_secret',
      environment: 'test',
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      previous_expires_at: expect.any(String),
    });
    const again = await kuko.account.rollNotificationSecret({ idempotencyKey: rolled.lastResponse.idempotencyKey! });
    expect(again.lastResponse.idempotentReplayed).toBe(true);
    expect(again.secret).toBe(rolled.secret);
  });

  it('keeps test and live apart', async () => {
    const order = await kuko.orders.create(newOrder());
    const live = s.client({}, s.merchant.liveKey);
    expect(await thrown(live.orders.retrieve(order.id))).toMatchObject({ status: 404, code: 'resource_missing' });
  });
});
