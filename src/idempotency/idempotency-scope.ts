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
 * The endpoint a request reached, as one canonical path: the route the router matched,
 * with each path parameter as the router decoded it, written back percent-encoded. So
 * every way of spelling one request names one endpoint: `/v1/%6Frders`, `//v1/orders/`,
 * the absolute form `http://host/v1/orders` a client sends through a forward proxy, a
 * raw `#fragment`, and `ord_a%3Ab` against `ord_a:b` (docs/idempotency.md).
 */
export function concretePath(request: FastifyRequest): string {
  const route = request.routeOptions.url;
  if (route === undefined) throw new Error('concretePath() needs a routed request');
  const params = request.params as Record<string, string | undefined>;
  return route.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));
}
