import { HttpException } from '@nestjs/common';
import { ApiResponse } from '../http/api-response';
import { isDatabaseUnavailable, isSerializationFailure } from '../../database/pg-errors';
import { DomainError } from './domain-error';
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
 * Turns anything thrown while serving a request into the SPEC §4 envelope. Unknown
 * errors become a generic 500 whose message reveals nothing; the caller logs the cause.
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

export function toDomainError(exception: unknown): DomainError {
  if (exception instanceof DomainError) return exception;
  if (exception instanceof HttpException) return fromHttpException(exception);
  if (isSerializationFailure(exception)) {
    return new DomainError(
      'idempotency_in_progress',
      'A concurrent request touched the same data; retry the request with the same Idempotency-Key.',
      null,
      { 'Retry-After': '1' },
    );
  }
  if (isDatabaseUnavailable(exception)) {
    return new DomainError(
      'service_unavailable',
      'The database is unreachable; retry the request with the same Idempotency-Key.',
      null,
      { 'Retry-After': '1' },
    );
  }
  return new DomainError(
    'internal_error',
    'An unexpected error occurred; retry the request with the same Idempotency-Key.',
  );
}

/** Errors raised by the framework before a controller runs (routing, body parsing). */
function fromHttpException(exception: HttpException): DomainError {
  switch (exception.getStatus()) {
    case 404:
      return new DomainError('route_not_found', 'No route matches this method and path.');
    case 413:
      return new DomainError('payload_too_large', 'The request body is larger than 64 KiB.');
    case 415:
      return new DomainError(
        'unsupported_media_type',
        'A request body must be sent as Content-Type: application/json.',
        'Content-Type',
      );
    case 400:
      return new DomainError('invalid_json', 'The request body is not valid JSON.');
    default:
      return exception.getStatus() < 500
        ? new DomainError('parameter_invalid', 'The request could not be processed as sent.')
        : new DomainError('internal_error', 'An unexpected error occurred.');
  }
}
