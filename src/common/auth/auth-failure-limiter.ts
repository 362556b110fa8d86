import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { type Credential, Metrics } from '../metrics/metrics';
import { DomainError } from '../errors/domain-error';
import { RepeatedCredentialHeader } from './repeated-header';

/** Failures an address may make per window before its failures are answered 429. */
const AUTH_FAILURE_LIMIT = 20;
const AUTH_FAILURE_WINDOW_MS = 60_000;
/** Addresses remembered at most; beyond, the stalest are forgotten first. */
const MAX_ADDRESSES = 10_000;

/**
 * Slows repeated authentication failures from one address (docs/operations.md): after
 * AUTH_FAILURE_LIMIT failures within a minute, further failures from that address answer
 * 429 rate_limited with Retry-After instead of 401, until the window has room again.
 * Only failures are counted and only failures are refused: a valid credential from the
 * same address is served as usual, and a successful request costs nothing here.
 *
 * Per instance, in process memory: with N instances behind a balancer an address gets up
 * to N × 20 failures a minute. That is acceptable for a limiter, which guarantees nothing
 * about data; correctness never depends on it.
 */
@Injectable()
export class AuthFailureLimiter {
  /** Per address, the times of its latest failures (at most AUTH_FAILURE_LIMIT), oldest first. */
  private readonly failures = new Map<string, number[]>();

  constructor(private readonly metrics: Metrics) {}

  /**
   * Records a failure and returns what to answer: the 401 given, or a 429 once over the
   * limit. A credential header sent more than once tried no credential: it is answered
   * as it is and not counted, even over the limit.
   */
  refuse(request: FastifyRequest, unauthorised: DomainError, credential: Credential): DomainError {
    if (unauthorised instanceof RepeatedCredentialHeader) return unauthorised;
    const now = Date.now();
    const address = request.ip;
    const times = (this.failures.get(address) ?? []).filter((time) => time > now - AUTH_FAILURE_WINDOW_MS);
    const limited = times.length >= AUTH_FAILURE_LIMIT;
    const retryAfterMs = limited ? times[0] + AUTH_FAILURE_WINDOW_MS - now : 0;
    times.push(now);
    if (times.length > AUTH_FAILURE_LIMIT) times.shift();
    // Re-inserted, so that the map's order is least recently failed first.
    this.failures.delete(address);
    this.failures.set(address, times);
    if (this.failures.size > MAX_ADDRESSES) this.forgetStalest();
    this.metrics.authFailures.inc({ credential, status: limited ? '429' : '401' });
    if (!limited) return unauthorised;
    return new DomainError(
      'rate_limited',
      `Too many failed authentications from this address; retry after ${Math.ceil(retryAfterMs / 1000)} s.`,
      null,
      { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) },
    );
  }

  /** The map is ordered least recently failed first: forget from the front. */
  private forgetStalest(): void {
    for (const address of this.failures.keys()) {
      if (this.failures.size <= MAX_ADDRESSES) return;
      this.failures.delete(address);
    }
  }
}
