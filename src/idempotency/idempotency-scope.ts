import type { FastifyRequest } from 'fastify';
import type { StoredKey } from './idempotency-keys.repository';
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

/** The request's valid Idempotency-Key, or null (absent or invalid); for @Idempotent() routes. */
export function validKeyOrNull(request: FastifyRequest): string | null {
  try {
    return parseIdempotencyKey(request.raw.rawHeaders);
  } catch {
    return null; // the interceptor refuses it with its proper error
  }
}

/**
 * The path as routed: percent-decoded as the router decodes it (so `/v1/%6Frders` is
 * `/v1/orders`), no query string, no duplicate or trailing slashes.
 */
export function concretePath(url: string): string {
  const raw = url.split('?')[0];
  let path: string;
  try {
    path = decodeURI(raw);
  } catch {
    path = raw; // not routable anyway: the router refuses it first
  }
  path = path.replace(/\/{2,}/g, '/');
  return path.length > 1 ? path.replace(/\/$/, '') : path;
}
