import { HttpException } from '@nestjs/common';
import { ApiResponse } from '../http/api-response';
import {
  isConnectionRefusal,
  isDatabaseBusy,
  isDatabaseUnavailable,
  isReadOnly,
  isSerializationFailure,
  isStalePlan,
} from '../../database/pg-errors';
import { DomainError, serviceUnavailable } from './domain-error';
import { ERROR_CATALOG, ErrorCode } from './error-catalog';

export interface ErrorBody {
  code: number;
  error: ErrorCode;
  type: string;
  message: string;
  param: string | null;
  request_id: string;
}

/**
 * Turns anything thrown while serving a request into the error envelope (docs/errors.md).
 * Unknown errors become a generic 500 whose message reveals nothing; the caller logs the cause.
 */
export function toErrorResponse(exception: unknown, requestId: string): ApiResponse {
  const error = toDomainError(exception);
  const { status, type } = ERROR_CATALOG[error.code];
  const body: ErrorBody = {
    code: status,
    error: error.code,
    type,
    message: error.message,
    param: error.param,
    request_id: requestId,
  };
  return new ApiResponse(status, body, error.headers);
}

const RETRY_ADVICE = 'retry the request (with the same Idempotency-Key, if it had one).';

export function toDomainError(exception: unknown): DomainError {
  if (exception instanceof DomainError) return exception;
  if (exception instanceof HttpException) return fromHttpException(exception);
  // Node's words when a client stops sending its body (it went away, or ran out of time):
  // the client's doing, and nothing ran. Its network code would read as a database one.
  if (exception instanceof Error && exception.message === 'aborted') {
    return new DomainError('malformed_request', 'The request body ended before it was complete; nothing was done.');
  }
  // The idempotency interceptor retries these on its routes; one that still reaches here
  // (a webhook, say) changed nothing and is worth retrying as it is.
  if (isSerializationFailure(exception)) {
    return serviceUnavailable('A concurrent request touched the same data; nothing was changed, retry the request.');
  }
  // A schema change (a migration) altered what a prepared statement returns; the next
  // attempt is planned afresh (Db).
  if (isStalePlan(exception)) {
    return serviceUnavailable(
      "The database's schema changed while this request was served; nothing was changed, retry the request.",
    );
  }
  if (isDatabaseBusy(exception)) {
    return serviceUnavailable(
      `The database is too busy to serve this request now; nothing was changed, ${RETRY_ADVICE}`,
    );
  }
  if (isReadOnly(exception)) {
    return serviceUnavailable(
      `The database is read-only now (a standby, or a primary being demoted); nothing was changed, ${RETRY_ADVICE}`,
    );
  }
  // A new connection refused (credentials, database name, TLS): nothing was sent on it.
  if (isConnectionRefusal(exception)) {
    return serviceUnavailable(
      `The database refused this service's connection (its credentials, database name or TLS); nothing was changed, ${RETRY_ADVICE}`,
    );
  }
  // Unreachable before anything was sent, nothing ran; a connection that broke while a
  // write was in flight (its COMMIT, say) may have carried it out. The service cannot
  // tell, so the answer says so, and a retry with the same key answers the outcome.
  if (isDatabaseUnavailable(exception)) {
    return serviceUnavailable(
      'The database is unreachable or the connection to it broke; if the request was already under way it may ' +
        `have been carried out: ${RETRY_ADVICE}`,
    );
  }
  return new DomainError('internal_error', `An unexpected error occurred; ${RETRY_ADVICE}`);
}

/** Errors raised by the framework before a controller runs (routing, body parsing). */
function fromHttpException(exception: HttpException): DomainError {
  // The reference's static files refuse a path with `..`, `.` or NUL in it: no such file
  // is served, so it is answered as under /v1, as no route.
  const cause = exception.cause as { code?: unknown; headers?: Record<string, string> } | undefined;
  if (cause?.code === 'FST_STATIC_FORBIDDEN_PATH') return routeNotFound();
  switch (exception.getStatus()) {
    case 404:
      return routeNotFound();
    case 412:
      return new DomainError(
        'precondition_failed',
        "The file does not match the request's If-Match or If-Unmodified-Since.",
      );
    case 416: {
      // `Content-Range: bytes */<length>` tells the client the file's length (RFC 9110 §15.5.17).
      // The files' library refuses a range it cannot read (`bytes=abc`) the same way.
      const range = cause?.headers?.['Content-Range'];
      return new DomainError(
        'range_not_satisfiable',
        'The requested Range is not a byte range within the file (bytes=first-last, counted from 0).',
        'Range',
        range ? { 'Content-Range': range } : {},
      );
    }
    case 413:
      return new DomainError('payload_too_large', 'The request body is larger than 64 KiB.');
    case 415:
      return notJsonBody();
    case 400:
      return new DomainError('invalid_json', 'The request body is not valid JSON.');
    default:
      return exception.getStatus() < 500
        ? new DomainError('parameter_invalid', 'The request could not be processed as sent.')
        : new DomainError('internal_error', 'An unexpected error occurred.');
  }
}

/** No route has this method and path (404). */
export function routeNotFound(): DomainError {
  return new DomainError('route_not_found', 'No route matches this method and path.');
}

/** A body sent as anything but application/json (415). */
export function notJsonBody(): DomainError {
  return new DomainError(
    'unsupported_media_type',
    'A request body must be sent as Content-Type: application/json.',
    'Content-Type',
  );
}
