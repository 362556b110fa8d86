import { expectError } from './support/expect-error';
import { Webhook } from 'standardwebhooks';
import { createMerchant, createOrder, TestMerchant } from './support/factories';
import { startTestApp, TestApp } from './support/test-app';
import { deliverEvent, NEW_SECRET, newEventId, paymentSucceeded, SECRET } from './support/webhooks';

const TEST_SECRET = SECRET;
const LIVE_SECRET = NEW_SECRET;

describe('webhook secrets per environment (docs/webhooks.md)', () => {
  let t: TestApp;
  let merchant: TestMerchant;

  beforeAll(async () => {
    t = await startTestApp({ WEBHOOK_SECRETS: `kukopay:test=${TEST_SECRET},kukopay:live=${LIVE_SECRET}` });
    merchant = await createMerchant(t);
  });
  afterAll(() => t.close());

  const order = async (id: string) => (await t.db.pool.query('SELECT status FROM orders WHERE id = $1', [id])).rows[0];
  const event = async (id: string) =>
    (await t.db.pool.query('SELECT status, reason, environment FROM webhook_events WHERE event_id = $1', [id])).rows[0];
  const fulfilments = async (orderId: string) =>
    (await t.db.pool.query('SELECT count(*)::int AS n FROM fulfillments WHERE order_id = $1', [orderId])).rows[0].n;

  it.each([
    ['a live order, signed by the test secret', 'live', TEST_SECRET],
    ['a test order, signed by the live secret', 'test', LIVE_SECRET],
  ] as const)('rejects %s, saying why, and leaves the order unpaid', async (_, environment, secret) => {
    const created = await createOrder(t, environment === 'live' ? merchant.liveKey : merchant.testKey);
    const payment = paymentSucceeded(created.id);
    const response = await deliverEvent(t, payment, { secret }).expect(200);
    expect(response.body.data).toEqual({ received: true, duplicate: false, status: 'rejected' });
    const recorded = await event(payment.id);
    expect(recorded.status).toBe('rejected');
    const signedWith = environment === 'live' ? 'test' : 'live';
    expect(recorded.reason).toBe(
      `the event is signed with a ${signedWith} secret only and may not touch a ${environment} object`,
    );
    expect(await order(created.id)).toEqual({ status: 'pending' });
    expect(await fulfilments(created.id)).toBe(0);

    // The secret of the order's own environment pays it (a new event: the rejected one is recorded).
    const right = environment === 'live' ? LIVE_SECRET : TEST_SECRET;
    const retried = await deliverEvent(t, paymentSucceeded(created.id), { secret: right }).expect(200);
    expect(retried.body.data.status).toBe('processed');
    expect(await order(created.id)).toEqual({ status: 'paid' });
    expect(await fulfilments(created.id)).toBe(1);
  });

  it('accepts svix-id / svix-timestamp / svix-signature as the Standard Webhooks headers', async () => {
    const created = await createOrder(t, merchant.testKey);
    const payment = paymentSucceeded(created.id, {}, newEventId());
    const raw = JSON.stringify(payment);
    /** The event signed at `at`, under the svix- names only. */
    const sendAsSvix = (at: Date) =>
      t
        .http()
        .post('/v1/webhooks/kukopay')
        .set('Content-Type', 'application/json')
        .set('svix-id', payment.id)
        .set('svix-timestamp', String(Math.floor(at.getTime() / 1000)))
        .set('svix-signature', new Webhook(TEST_SECRET).sign(payment.id, at, raw))
        .send(raw);
    const response = await sendAsSvix(new Date()).expect(200);
    expect(response.body.data.status).toBe('processed');
    expect(await order(created.id)).toEqual({ status: 'paid' });

    // A refusal names the header as it was sent.
    const stale = await sendAsSvix(new Date(Date.now() - 600_000));
    expectError(stale, 400, 'webhook_signature_invalid', 'svix-timestamp');
  });

  it('a secret given as provider= signs events of both environments', async () => {
    const both = await startTestApp({ WEBHOOK_SECRETS: `kukopay=${TEST_SECRET}` }, t.db);
    try {
      const created = await createOrder(both, merchant.liveKey);
      const response = await deliverEvent(both, paymentSucceeded(created.id), { secret: TEST_SECRET }).expect(200);
      expect(response.body.data.status).toBe('processed');
    } finally {
      await both.close();
    }
  });
});
