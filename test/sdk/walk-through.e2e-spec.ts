import { KukoPay, KukoPayAuthenticationError, KukoPayError, KukoPayIdempotencyError } from '@kukopay/node';
import { deliverEvent, newEventId, paymentSucceeded } from '../support/webhooks';
import { SdkServer, startSdkServer } from './support/sdk-server';

/** README.md "Use it from Node", step by step, against the real server (the same numbers and keys). */
describe('README walk-through with @kukopay/node', () => {
  let s: SdkServer;

  beforeAll(async () => {
    s = await startSdkServer();
  });
  afterAll(() => s.close());

  const thrown = (promise: Promise<unknown>) =>
    promise.then(
      () => null,
      (error: unknown) => error,
    );

  it('runs every step of the section with the answers its comments show', async () => {
    const kuko = s.client();

    const account = await kuko.account.retrieve();
    expect([account.id, account.environment]).toEqual([s.merchant.id, 'test']);

    const params = { out_trade_no: 'ORDER_20260921_0001', amount: 2990, currency: 'USD', subject: 'Annual plan' };
    const key = 'order-ORDER_20260921_0001';
    const order = await kuko.orders.create(params, { idempotencyKey: key });
    const again = await kuko.orders.create(params, { idempotencyKey: key });
    expect([order.lastResponse.status, again.id === order.id, again.lastResponse.idempotentReplayed]).toEqual([
      201,
      true,
      true,
    ]);
    expect(again.lastResponse.requestId).toBe(order.lastResponse.requestId);

    const misuse = await thrown(kuko.orders.create({ ...params, amount: 2991 }, { idempotencyKey: key }));
    expect(misuse).toBeInstanceOf(KukoPayIdempotencyError);
    expect(misuse).toMatchObject({ code: 'idempotency_error', param: 'Idempotency-Key' });

    const same = await kuko.orders.create({ ...params, amount: 2991 });
    expect([same.id === order.id, same.amount, same.lastResponse.status]).toEqual([true, 2990, 200]);

    expect((await kuko.orders.retrieve(order.id)).status).toBe('pending');
    expect((await kuko.orders.retrieveByOutTradeNo(params.out_trade_no)).id).toBe(order.id);
    const listed: string[] = [];
    for await (const o of kuko.orders.list({ limit: 10 })) listed.push(o.out_trade_no);
    expect(listed).toEqual(['ORDER_20260921_0001']);
    const spare = await kuko.orders.create({ ...params, out_trade_no: 'ORDER_20260921_0002' });
    expect((await kuko.orders.close(spare.id)).status).toBe('closed');

    // "Pay the order": the provider's signed payment.succeeded webhook.
    const paid = await deliverEvent(s.t, paymentSucceeded(order.id, { amount: 2990, currency: 'USD' }, newEventId()));
    expect(paid.body.data).toMatchObject({ status: 'processed' });

    const refund = await kuko.refunds.create({ order_id: order.id, amount: 1000, out_refund_no: 'REFUND_1' });
    expect([refund.status, (await kuko.orders.retrieve(order.id)).status]).toEqual(['pending', 'partially_refunded']);
    const exceeded = await thrown(kuko.refunds.create({ order_id: order.id, amount: 2000, out_refund_no: 'REFUND_2' }));
    expect(exceeded).toBeInstanceOf(KukoPayError);
    expect(exceeded).toMatchObject({ status: 400, code: 'refund_amount_exceeded', param: 'amount' });
    const refunds: Array<[string, number, string]> = [];
    for await (const r of kuko.refunds.list({ order_id: order.id })) refunds.push([r.id, r.amount, r.status]);
    expect(refunds).toEqual([[refund.id, 1000, 'pending']]);

    const stranger = await thrown(new KukoPay('kuko_test_wrong', { baseUrl: s.url }).account.retrieve());
    expect(stranger).toBeInstanceOf(KukoPayAuthenticationError);
    expect(stranger).toMatchObject({ code: 'api_key_invalid' });
  });
});
