import secureJsonParse from 'secure-json-parse';
import { DomainError } from '../common/errors/domain-error';
import { utf8Text } from '../common/http/kuko-fastify-adapter';
import { isJsonObject, refuseUnstorableJson } from '../common/validation/storable-json';

/** A provider event as posted: `{id, type, created_at, data}` (docs/webhooks.md). */
export interface WebhookEvent {
  id: string;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
}

/** A date-time as RFC 3339 writes it (an offset, optional fractions of a second). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * Parses a body whose signature has been verified. Not JSON, empty, or not shaped like an
 * event: refused, and nothing is recorded.
 */
export function parseWebhookEvent(raw: Buffer, webhookId: string): WebhookEvent {
  if (raw.length === 0) throw new DomainError('invalid_json', 'The webhook body is empty.');
  let body: unknown;
  try {
    body = secureJsonParse.parse(utf8Text(raw, 'The webhook body'), {
      protoAction: 'error',
      constructorAction: 'error',
    });
  } catch (error) {
    if (error instanceof DomainError) throw error;
    throw new DomainError('invalid_json', `The webhook body is not valid JSON: ${(error as Error).message}`);
  }
  if (!isJsonObject(body)) {
    throw invalid('The webhook body must be an event object.', null);
  }
  const event = body as Record<string, unknown>;
  const refusal = refuseUnstorableJson(event);
  if (refusal) throw refusal;
  for (const field of ['id', 'type', 'created_at'] as const) {
    if (typeof event[field] !== 'string' || event[field] === '') {
      throw invalid(`The event's ${field} must be a non-empty string.`, field);
    }
  }
  if (!RFC3339.test(event.created_at as string) || Number.isNaN(Date.parse(event.created_at as string))) {
    throw invalid("The event's created_at must be an RFC 3339 time, such as 2026-11-29T08:00:00Z.", 'created_at');
  }
  if (typeof event.data !== 'object' || event.data === null || Array.isArray(event.data)) {
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

/** A string field of `data` that may be absent. */
export function optionalString(event: WebhookEvent, name: string): string | null {
  const value = event.data[name];
  return typeof value === 'string' ? value : null;
}

function invalid(message: string, param: string | null): DomainError {
  return new DomainError('parameter_invalid', message, param);
}
