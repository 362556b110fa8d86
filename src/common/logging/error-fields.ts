import type { FastifyRequest } from 'fastify';
import type { ApiResponse } from '../http/api-response';
import { addLogFields, RequestLogFields } from './request-logging';

/**
 * 5xx answers that are the service working as designed (docs/operations.md): warn, not
 * error, and never a stack.
 */
const EXPECTED_5XX = new Set(['resource_not_ready', 'webhooks_not_configured']);

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

export function levelOf(status: number, fields: RequestLogFields | undefined): 'info' | 'warn' | 'error' {
  if (status < 500) return 'info';
  return EXPECTED_5XX.has(String(fields?.error)) ? 'warn' : 'error';
}
