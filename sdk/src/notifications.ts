/**
 * Verifies a notification (Standard Webhooks, signed with the merchant's `whsec_` secret)
 * over the raw body bytes, with the maintained verifier. Deduplicate what it returns by
 * the event's `id`: the same event may arrive more than once.
 */
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { KukoPaySignatureVerificationError } from './errors.ts';
import type { Event } from './types.ts';

/** Node's IncomingHttpHeaders, a fetch `Headers`, or any record of header names to values. */
export type NotificationHeaders =
  { get(name: string): string | null } | Readonly<Record<string, string | readonly string[] | undefined>>;

const SIGNED_HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

/**
 * Returns the event when a signature matches one of `secrets` (pass two while rolling a
 * secret) and the timestamp is within 5 minutes; throws KukoPaySignatureVerificationError
 * otherwise. `rawBody` must be the bytes as received, before any JSON parsing.
 */
export function verify(
  rawBody: string | Uint8Array,
  headers: NotificationHeaders,
  secrets: string | readonly string[],
): Event {
  const verifiers = toVerifiers(secrets);
  const payload = toPayload(rawBody);
  const signed = signedHeaders(headers);
  let reason = 'No v1 signature matches the body with the given secret(s).';
  for (const verifier of verifiers) {
    try {
      verifier.verify(payload, signed, { jsonParse: false });
      return toEvent(payload.toString('utf8'), signed['webhook-id']);
    } catch (error) {
      if (error instanceof KukoPaySignatureVerificationError) throw error;
      if (!(error instanceof WebhookVerificationError)) throw error;
      if (/too (old|new)/.test(error.message)) {
        reason = 'The webhook-timestamp is more than 5 minutes away from this clock.';
      }
    }
  }
  throw new KukoPaySignatureVerificationError(reason);
}

function toVerifiers(secrets: string | readonly string[]): Webhook[] {
  if (typeof secrets !== 'string' && !Array.isArray(secrets)) {
    throw new TypeError('verify() needs the whsec_ secret, or an array of them, as its third argument.');
  }
  const list: unknown[] = typeof secrets === 'string' ? [secrets] : [...secrets];
  if (list.length === 0) throw new TypeError('verify() needs at least one whsec_ secret.');
  return list.map((secret) => {
    if (typeof secret !== 'string' || !/^whsec_[A-Za-z0-9+/]+={0,2}$/.test(secret)) {
      throw new TypeError('A notification secret is whsec_ followed by base64, as the API returned it.');
    }
    return new Webhook(secret);
  });
}

function toPayload(rawBody: string | Uint8Array): Buffer {
  if (typeof rawBody === 'string') return Buffer.from(rawBody, 'utf8');
  if (rawBody instanceof Uint8Array) return Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  throw new TypeError('verify() needs the raw body (string, Buffer or Uint8Array) as received, not parsed JSON.');
}

function signedHeaders(headers: NotificationHeaders): Record<(typeof SIGNED_HEADERS)[number], string> {
  const read = headerReader(headers);
  const signed = {} as Record<(typeof SIGNED_HEADERS)[number], string>;
  for (const name of SIGNED_HEADERS) {
    const value = read(name);
    if (value === undefined || value === '') {
      throw new KukoPaySignatureVerificationError(`The ${name} header is missing.`);
    }
    signed[name] = value;
  }
  if (!/^\d{1,12}$/.test(signed['webhook-timestamp'])) {
    throw new KukoPaySignatureVerificationError('The webhook-timestamp header must be unix seconds.');
  }
  return signed;
}

function headerReader(headers: NotificationHeaders): (name: string) => string | undefined {
  if (typeof headers !== 'object' || headers === null) {
    throw new TypeError("verify() needs the request's headers (an object, or a fetch Headers) as its second argument.");
  }
  if (typeof headers.get === 'function') {
    const getter = headers as { get(name: string): string | null };
    return (name) => getter.get(name) ?? undefined;
  }
  const lower = new Map<string, string | readonly string[] | undefined>();
  for (const [name, value] of Object.entries(headers)) lower.set(name.toLowerCase(), value);
  return (name) => {
    const value = lower.get(name);
    if (typeof value === 'string' || value === undefined) return value;
    if (value.length > 1) throw new KukoPaySignatureVerificationError(`The ${name} header was sent more than once.`);
    return value[0];
  };
}

function toEvent(text: string, webhookId: string): Event {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw new KukoPaySignatureVerificationError('The signed body is not JSON.', error);
  }
  const event = body as Partial<Event> | null;
  const isEvent =
    typeof event === 'object' &&
    event !== null &&
    event.object === 'event' &&
    typeof event.type === 'string' &&
    typeof event.data?.object === 'object';
  if (!isEvent) throw new KukoPaySignatureVerificationError('The signed body is not a KukoPay event.');
  if (event.id !== webhookId) {
    throw new KukoPaySignatureVerificationError('The event id differs from the webhook-id header.');
  }
  return event as Event;
}
