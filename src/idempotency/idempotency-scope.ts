import type { FastifyRequest } from 'fastify';
import type { StoredKey } from './idempotency.store';
import { parseIdempotencyKey } from './idempotency-key-header';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The answer stored under the request's Idempotency-Key, read by ApiKeyGuard in the
     * same round trip as the API key (null: nothing stored yet).
     */
    prefetchedAnswer?: { key: string; stored: StoredKey | null };
  }
}

/** Every POST under /v1, except the webhook receiver and the admin API (SPEC §7). */
export function isIdempotent(request: FastifyRequest): boolean {
  const path = concretePath(request.url);
  return (
    request.method === 'POST' &&
    path.startsWith('/v1/') &&
    !path.startsWith('/v1/webhooks/') &&
    !path.startsWith('/v1/admin/')
  );
}

/** The request's valid Idempotency-Key, or null (absent, invalid, or not applicable). */
export function validKeyOrNull(request: FastifyRequest): string | null {
  if (!isIdempotent(request)) return null;
  try {
    return parseIdempotencyKey(request.raw.rawHeaders);
  } catch {
    return null; // the interceptor refuses it with its proper error
  }
}

/** The path as routed: no query string, no duplicate or trailing slashes. */
export function concretePath(url: string): string {
  const path = url.split('?')[0].replace(/\/{2,}/g, '/');
  return path.length > 1 ? path.replace(/\/$/, '') : path;
}
