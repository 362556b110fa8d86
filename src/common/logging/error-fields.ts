import type { FastifyRequest } from 'fastify';
import { ERROR_CATALOG, ErrorCode } from '../errors/error-catalog';
import type { ApiResponse } from '../http/api-response';
import { addLogFields, RequestLogFields } from './request-logging';

/**
 * Puts the answer's error code on the request's log line (and its metrics). A replayed
 * answer's body is its stored JSON text; the code is read from it without parsing.
 */
export function noteErrorCode(request: FastifyRequest, response: ApiResponse): void {
  if (response.status < 400) return;
  const code =
    typeof response.body === 'string'
      ? /"error":"([a-z_]+)"/.exec(response.body)?.[1]
      : (response.body as { error?: unknown }).error;
  if (typeof code === 'string') addLogFields(request, { error: code });
}

/**
 * A request line's level: a 5xx is an error unless the catalog marks it as designed, or
 * the database was too busy to serve it in time (load shed, `database_busy`).
 */
export function levelOf(status: number, fields: RequestLogFields | undefined): 'info' | 'warn' | 'error' {
  if (status < 500) return 'info';
  if (fields?.database_busy) return 'warn';
  const entry = ERROR_CATALOG[String(fields?.error) as ErrorCode] as { designed?: true } | undefined;
  return entry?.designed ? 'warn' : 'error';
}
