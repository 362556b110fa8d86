import { createHmac, randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { TestApp } from './test-app';

export const SECRET = `whsec_${Buffer.from('kukopay-test-secret-number-one!!').toString('base64')}`;
export const NEW_SECRET = `whsec_${Buffer.from('kukopay-test-secret-number-two!!').toString('base64')}`;
export const WEBHOOK_ENV = { WEBHOOK_SECRETS: `kukopay=${SECRET}` };

export function newEventId(): string {
  return `evt_${randomBytes(12).toString('hex')}`;
}

export function paymentSucceeded(orderId: string, data: Record<string, unknown> = {}, id = newEventId()) {
  return {
    id,
    type: 'payment.succeeded',
    created_at: new Date().toISOString(),
    data: { order_id: orderId, amount: 2990, currency: 'USD', provider_payment_id: `pay_${id}`, ...data },
  };
}

export interface Delivery {
  /** Sent as these exact bytes: a string as UTF-8, a Buffer as it is (signed by signBytes). */
  body: string | Buffer;
  id?: string;
  secret?: string;
  /** webhook-timestamp; now when not given. */
  at?: Date;
  /** Seconds to add to the current time in webhook-timestamp. */
  skew?: number;
  signature?: string;
  provider?: string;
  contentType?: string;
  headers?: Record<string, string | undefined>;
}

/** Posts a body signed as a provider would (Standard Webhooks), over its exact bytes. */
export function deliver(t: TestApp, delivery: Delivery) {
  const raw = delivery.body;
  const id = delivery.id ?? (typeof raw === 'string' ? (JSON.parse(raw || '{}').id as string) : null) ?? newEventId();
  const timestamp = delivery.at ?? new Date(Date.now() + (delivery.skew ?? 0) * 1000);
  const secret = delivery.secret ?? SECRET;
  const signature =
    delivery.signature ??
    (typeof raw === 'string' ? new Webhook(secret).sign(id, timestamp, raw) : signBytes(secret, id, timestamp, raw));
  const headers: Record<string, string | undefined> = {
    'Content-Type': delivery.contentType ?? 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
    'webhook-signature': signature,
    ...delivery.headers,
  };
  const request = t.http().post(`/v1/webhooks/${delivery.provider ?? 'kukopay'}`);
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) request.set(name, value);
  // Bytes as they are: superagent would write a Buffer as JSON for this content type.
  if (Buffer.isBuffer(raw)) request.serialize((body: Buffer) => body as unknown as string);
  return request.send(raw);
}

export function deliverEvent(t: TestApp, event: object, options: Omit<Delivery, 'body'> = {}) {
  return deliver(t, { body: JSON.stringify(event), ...options });
}

/**
 * A v1 signature over exactly these bytes, computed as the Standard Webhooks
 * specification defines it rather than by the library (which signs text): for bodies
 * that are not UTF-8.
 */
export function signBytes(secret: string, id: string, timestamp: Date, body: Buffer): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const seconds = Math.floor(timestamp.getTime() / 1000);
  const hmac = createHmac('sha256', key).update(`${id}.${seconds}.`).update(body).digest('base64');
  return `v1,${hmac}`;
}
