import { deliverEvent, paymentSucceeded } from './webhooks';
import { ADMIN_TOKEN, TestApp } from './test-app';

export interface TestMerchant {
  id: string;
  testKey: string;
  liveKey: string;
  /** The notification signing secrets, shown once at creation. */
  secrets: { test: string; live: string };
}

export async function createMerchant(t: TestApp, name = 'Acme'): Promise<TestMerchant> {
  const response = await t
    .http()
    .post('/v1/admin/merchants')
    .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
    .send({ name })
    .expect(201);
  const { id, api_keys, notification_secrets } = response.body.data;
  return { id, testKey: api_keys.test, liveKey: api_keys.live, secrets: notification_secrets };
}

let sequence = 0;

/** A valid create-order body with a unique out_trade_no. */
export function orderBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  sequence += 1;
  return {
    out_trade_no: `ORDER_${process.pid}_${Date.now()}_${sequence}`,
    amount: 2990,
    currency: 'USD',
    subject: 'Annual plan',
    ...overrides,
  };
}

/**
 * POST /v1/orders as a merchant's server sends it: the body as an object, or as JSON text
 * exactly as written; with an Idempotency-Key when one is given.
 */
export function postOrder(t: TestApp, apiKey: string, body: object | string, idempotencyKey?: string) {
  const request = t.http().post('/v1/orders').set('X-Api-Key', apiKey).set('Content-Type', 'application/json');
  if (idempotencyKey !== undefined) request.set('Idempotency-Key', idempotencyKey);
  return request.send(body);
}

export async function createOrder(t: TestApp, key: string, overrides: Record<string, unknown> = {}) {
  const response = await t.http().post('/v1/orders').set('X-Api-Key', key).send(orderBody(overrides)).expect(201);
  return response.body.data as { id: string; out_trade_no: string; amount: number; status: string };
}

/** An order paid through a signed payment.succeeded webhook (the app needs WEBHOOK_ENV). */
export async function createPaidOrder(t: TestApp, key: string, overrides: Record<string, unknown> = {}) {
  const order = await createOrder(t, key, overrides);
  const response = await deliverEvent(
    t,
    paymentSucceeded(order.id, { amount: order.amount, currency: (overrides.currency as string) ?? 'USD' }),
  );
  if (response.body.data?.status !== 'processed') throw new Error(`payment not processed: ${response.text}`);
  return { ...order, status: 'paid' };
}
