import { ErrorCode } from './error-catalog';

/**
 * A refusal with a machine code. Thrown by services and guards; never an HttpException,
 * so the code, not the framework, decides the status (see error-catalog.ts).
 */
export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly param: string | null = null,
    /** Extra response headers, such as Retry-After. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

/** 503 service_unavailable: nothing to fix in the request, send it again after a second. */
export const serviceUnavailable = (message: string) =>
  new DomainError('service_unavailable', message, null, { 'Retry-After': '1' });

/** How much of an unknown id a message quotes: every real id is far shorter. */
const QUOTED_ID_CHARS = 100;

export const notFound = (what: string, id: string, param: string | null = 'id') =>
  new DomainError('resource_missing', `No such ${what}: '${quotedId(id)}'`, param);

/** The id as sent, or its first characters and an ellipsis: a 15 KB cursor is not echoed back whole. */
function quotedId(id: string): string {
  const chars = [...id];
  return chars.length > QUOTED_ID_CHARS ? `${chars.slice(0, QUOTED_ID_CHARS).join('')}…` : id;
}
