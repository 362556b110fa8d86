import type { AttemptFailure } from './retry.ts';
import type { ApiErrorBody, ErrorType } from './types.ts';

export type KukoPayErrorType = ErrorType | 'api_connection_error' | 'signature_verification_error';

export interface KukoPayErrorFields {
  message: string;
  /** HTTP status of the answer; null when no answer came. */
  status: number | null;
  /** The machine code of the answer (`error` in its body), e.g. `refund_amount_exceeded`. */
  code: string | null;
  param: string | null;
  requestId: string | null;
  /** The key the request was sent with (POST only): store it to retry the same operation later. */
  idempotencyKey: string | null;
  headers: Readonly<Record<string, string>>;
}

/** Every error this client throws. Subclasses tell the category (`type`) apart. */
export class KukoPayError extends Error {
  readonly type: KukoPayErrorType;
  readonly status: number | null;
  readonly code: string | null;
  readonly param: string | null;
  readonly requestId: string | null;
  readonly idempotencyKey: string | null;
  readonly headers: Readonly<Record<string, string>>;

  constructor(type: KukoPayErrorType, fields: KukoPayErrorFields, options?: { cause?: unknown }) {
    super(fields.message, options);
    this.name = new.target.name;
    this.type = type;
    this.status = fields.status;
    this.code = fields.code;
    this.param = fields.param;
    this.requestId = fields.requestId;
    this.idempotencyKey = fields.idempotencyKey;
    this.headers = fields.headers;
  }
}

/** Fix the request before retrying: validation, 404, business refusals. */
export class KukoPayInvalidRequestError extends KukoPayError {
  constructor(fields: KukoPayErrorFields) {
    super('invalid_request_error', fields);
  }
}

/** The key was used with another body or endpoint, or is still in progress after every retry. */
export class KukoPayIdempotencyError extends KukoPayError {
  constructor(fields: KukoPayErrorFields) {
    super('idempotency_error', fields);
  }
}

export class KukoPayAuthenticationError extends KukoPayError {
  constructor(fields: KukoPayErrorFields) {
    super('authentication_error', fields);
  }
}

export class KukoPayRateLimitError extends KukoPayError {
  constructor(fields: KukoPayErrorFields) {
    super('rate_limit_error', fields);
  }
}

/** A server-side failure that persisted through every retry; safe to retry later with the same key. */
export class KukoPayAPIError extends KukoPayError {
  constructor(fields: KukoPayErrorFields) {
    super('api_error', fields);
  }
}

/**
 * No answer came (connection refused or lost, or `timeoutMs` passed) on the last attempt,
 * or the caller's `signal` ended the call (`reason` `aborted`).
 * The server may have executed the request: retry later with `idempotencyKey` to get its
 * answer without running it twice.
 */
export class KukoPayConnectionError extends KukoPayError {
  readonly reason: AttemptFailure | 'aborted';

  constructor(reason: AttemptFailure | 'aborted', fields: KukoPayErrorFields, cause?: unknown) {
    super('api_connection_error', fields, { cause });
    this.reason = reason;
  }
}

/** A notification whose signature, timestamp or body does not verify. */
export class KukoPaySignatureVerificationError extends KukoPayError {
  constructor(message: string, cause?: unknown) {
    const fields = { message, status: null, code: null, param: null, requestId: null, idempotencyKey: null };
    super('signature_verification_error', { ...fields, headers: {} }, { cause });
  }
}

const BY_TYPE: Record<ErrorType, new (fields: KukoPayErrorFields) => KukoPayError> = {
  invalid_request_error: KukoPayInvalidRequestError,
  idempotency_error: KukoPayIdempotencyError,
  authentication_error: KukoPayAuthenticationError,
  rate_limit_error: KukoPayRateLimitError,
  api_error: KukoPayAPIError,
};

export interface ErrorAnswer {
  status: number;
  headers: Readonly<Record<string, string>>;
  /** The parsed body, or undefined when it was not JSON. */
  body: unknown;
  idempotencyKey: string | null;
}

/** The error for an answer that is not a success: by its `type`, or by status when the body is not ours. */
export function errorFromAnswer({ status, headers, body, idempotencyKey }: ErrorAnswer): KukoPayError {
  const requestId = headers['x-request-id'] || requestIdOf(body);
  if (isErrorBody(body)) {
    const param = body.param ?? null;
    const fields = { message: body.message, status, code: body.error, param, requestId, idempotencyKey, headers };
    if (Object.hasOwn(BY_TYPE, body.type)) return new BY_TYPE[body.type](fields);
    // A category this client does not know yet (a newer server): its code and message
    // still say what happened; the class follows the status.
    return byStatus(status, fields);
  }
  // A redirect (an http→https load balancer, a moved host) is not followed: a POST's body
  // and key might not survive it. Its target is what the caller needs to fix baseUrl.
  const location = status >= 300 && status < 400 ? headers.location : undefined;
  const message = location
    ? `The server answered ${status}, a redirect to ${location}, which this client does not follow: set baseUrl to the address the API is served at.`
    : `The server answered ${status} without a KukoPay error body.`;
  return byStatus(status, { message, status, code: null, param: null, requestId, idempotencyKey, headers });
}

function byStatus(status: number, fields: KukoPayErrorFields): KukoPayError {
  if (status === 401) return new KukoPayAuthenticationError(fields);
  if (status === 429) return new KukoPayRateLimitError(fields);
  if (status === 409) return new KukoPayIdempotencyError(fields);
  return status >= 500 ? new KukoPayAPIError(fields) : new KukoPayInvalidRequestError(fields);
}

function isErrorBody(body: unknown): body is ApiErrorBody {
  if (typeof body !== 'object' || body === null) return false;
  const candidate = body as Record<string, unknown>;
  return (
    typeof candidate.error === 'string' && typeof candidate.message === 'string' && typeof candidate.type === 'string'
  );
}

/** The body's `request_id`, for an answer whose X-Request-Id header a proxy dropped. */
export function requestIdOf(body: unknown): string | null {
  const id = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).request_id : undefined;
  return typeof id === 'string' ? id : null;
}
