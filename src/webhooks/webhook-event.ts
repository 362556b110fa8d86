import { DomainError } from '../common/errors/domain-error';
import { isIdOf } from '../common/ids';
import { charCount } from '../common/validation/validators';
import { parseJsonText } from '../common/validation/json-text';
import { isJsonObject } from '../common/validation/storable-json';

/** A provider event as posted: `{id, type, created_at, data}` (docs/webhooks.md). */
export interface WebhookEvent {
  id: string;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
}

/** A date-time as RFC 3339 writes it (an offset, optional fractions of a second). */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$/;
/** Longer than any provider's event ids (Standard Webhooks' and Stripe's are under 40). */
export const MAX_EVENT_ID_CHARS = 255;

/**
 * RFC 3339's form with a date that exists and times in range (§5.6, a leap second
 * included). Date.parse alone would take 2020-02-30 as 1 March.
 */
export function isRfc3339Time(text: string): boolean {
  const match = RFC3339.exec(text);
  if (!match) return false;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number);
  const offset = match[9] === undefined ? [0, 0] : [Number(match[9]), Number(match[10])];
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day); // Date.UTC would read years 0-99 as 1900-1999
  const realDay = date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
  return realDay && hour <= 23 && minute <= 59 && second <= 60 && offset[0] <= 23 && offset[1] <= 59;
}

/**
 * Parses a body (its UTF-8 text) whose signature has been verified. Not JSON, empty, or not
 * shaped like an event: refused, and nothing is recorded.
 */
export function parseWebhookEvent(text: string, webhookId: string): WebhookEvent {
  if (text.length === 0) throw new DomainError('invalid_json', 'The webhook body is empty.');
  let body: unknown;
  try {
    body = parseJsonText(text);
  } catch (error) {
    if (error instanceof DomainError) throw error;
    throw new DomainError('invalid_json', `The webhook body is not valid JSON: ${(error as Error).message}`);
  }
  if (!isJsonObject(body)) {
    throw invalid('The webhook body must be an event object.', null);
  }
  const event = body as Record<string, unknown>;
  for (const field of ['id', 'type', 'created_at'] as const) {
    if (typeof event[field] !== 'string' || event[field] === '') {
      throw invalid(`The event's ${field} must be a non-empty string.`, field);
    }
  }
  // The id is the deduplication key (webhook_events' primary key): bounded, so that no
  // id can be too long for its index entry.
  if (charCount(event.id as string) > MAX_EVENT_ID_CHARS) {
    throw invalid(`The event's id must be at most ${MAX_EVENT_ID_CHARS} characters.`, 'id');
  }
  if (!isRfc3339Time(event.created_at as string)) {
    throw invalid("The event's created_at must be an RFC 3339 time, such as 2026-11-29T08:00:00Z.", 'created_at');
  }
  if (!isJsonObject(event.data)) {
    throw invalid("The event's data must be an object.", 'data');
  }
  if (event.id !== webhookId) throw invalid('The event id must equal the webhook-id header.', 'id');
  return event as unknown as WebhookEvent;
}

/** Reads one required field of `data`, refusing the event when it is missing or mistyped. */
export function field<T extends 'string' | 'integer'>(
  event: WebhookEvent,
  name: string,
  kind: T,
): T extends 'string' ? string : number {
  const value = event.data[name];
  const ok = kind === 'string' ? typeof value === 'string' && value !== '' : Number.isSafeInteger(value);
  if (!ok)
    throw invalid(`data.${name} must be ${kind === 'string' ? 'a non-empty string' : 'an integer'}.`, `data.${name}`);
  return value as T extends 'string' ? string : number;
}

/**
 * An id this service made (`ord_…`, `rf_…`) that an event refers to. One of another form
 * can never name an object, so the event is refused (400) rather than answered "not
 * ready, retry" (503), which a provider would retry for as long as its schedule lasts.
 */
export function refuseUnlessIdOf(prefix: 'ord' | 'rf', value: string, name: string): void {
  if (!isIdOf(prefix, value)) {
    const what = prefix === 'ord' ? 'an order' : 'a refund';
    throw invalid(`data.${name} must be ${what} id (${prefix}_ and 32 hexadecimal digits).`, `data.${name}`);
  }
}

/** A string field of `data` that may be absent; sent, it must be a string, as documented. */
export function optionalString(event: WebhookEvent, name: string): string | null {
  const value = event.data[name];
  if (value === undefined) return null;
  if (typeof value !== 'string') throw invalid(`data.${name} must be a string, or left out.`, `data.${name}`);
  return value;
}

function invalid(message: string, param: string | null): DomainError {
  return new DomainError('parameter_invalid', message, param);
}
