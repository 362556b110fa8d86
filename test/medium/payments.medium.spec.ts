import type { RequestAuth } from '../../src/common/auth/request-auth';
import { event, MediumContext, startMedium } from '../support/medium';

/** Payment rules against real PostgreSQL, through the handler alone (docs/webhooks.md). */
describe('payments, service tier', () => {
  let m: MediumContext;
  let auth: RequestAuth;
  let sequence = 0;

  beforeAll(async () => {
    m = await startMedium();
    auth = await m.newMerchant();
  });
  afterAll(() => m.close());

  const pendingOrder = async (amount = 700) => {
    sequence += 1;
    const body = { out_trade_no: `PAY_${sequence}`, amount, currency: 'USD', subject: 'Medium' };
    return (await m.inTransaction(() => m.orders.create(auth, body))).order.id;
  };
  const pay = (orderId: string, amount = 700, currency = 'USD') =>
    m.inTransaction(() =>
      m.payments.apply(
        event('payment.succeeded', { order_id: orderId, amount, currency, provider_payment_id: 'pay_x' }),
        'kukopay',
      ),
    );
  const fulfilments = async (orderId: string) =>
    (await m.database.pool.query('SELECT count(*)::int AS n FROM fulfillments WHERE order_id = $1', [orderId])).rows[0]
      .n;

  it('pays and fulfils an order once when different events for it race', async () => {
    for (let round = 0; round < 5; round++) {
      const orderId = await pendingOrder();
      const outcomes = await Promise.all(Array.from({ length: 8 }, () => pay(orderId)));
      expect(outcomes.filter((outcome) => outcome.status === 'processed')).toHaveLength(1);
      expect(outcomes.filter((outcome) => outcome.status === 'ignored')).toHaveLength(7);
      expect(await fulfilments(orderId)).toBe(1);
    }
  });

  it('rejects a payment whose amount or currency differs, and leaves the order pending', async () => {
    const orderId = await pendingOrder();
    expect((await pay(orderId, 699)).status).toBe('rejected');
    expect((await pay(orderId, 700, 'EUR')).status).toBe('rejected');
    expect((await m.orders.getById(auth, orderId)).status).toBe('pending');
    expect(await fulfilments(orderId)).toBe(0);
  });

  it('never moves a closed order, whichever of close and payment comes first', async () => {
    for (let round = 0; round < 5; round++) {
      const orderId = await pendingOrder();
      const [paid, closed] = await Promise.allSettled([
        pay(orderId),
        m.inTransaction(() => m.orders.close(auth, orderId)),
      ]);
      const order = await m.orders.getById(auth, orderId);
      if (order.status === 'paid') {
        expect(paid).toMatchObject({ status: 'fulfilled', value: { status: 'processed' } });
        expect(closed.status).toBe('rejected');
        expect(await fulfilments(orderId)).toBe(1);
      } else {
        expect(order.status).toBe('closed');
        expect(paid).toMatchObject({ status: 'fulfilled', value: { status: 'ignored' } });
        expect(await fulfilments(orderId)).toBe(0);
      }
    }
  });
});
