/**
 * The Idempotency-Key layer (SPEC §7). For every POST under /v1 (but webhooks and admin):
 *
 * - Without a key, the handler runs in one transaction.
 * - With a key, one READ COMMITTED transaction holds everything:
 *   1. try the key's advisory lock and read its stored answer (one statement). A stored,
 *      unexpired answer is replayed if endpoint and body fingerprint match, else refused
 *      (400 idempotency_error). No lock: another request holds the key, 409 at once.
 *   2. run the handler after a savepoint. A 2xx, or a 4xx the request itself caused
 *      (validation, 404, business refusal: its writes rolled back to the savepoint), is
 *      stored under the key and committed together with the business writes.
 *   3. a 5xx rolls the whole transaction back: nothing stored, the key is free again.
 *
 * The lock is transaction-scoped, so a crash, kill or lost connection frees it: no key
 * can stay stuck, and no answer is ever committed without its writes or the reverse.
 */
import { CallHandler, ExecutionContext, Inject, Injectable, NestInterceptor } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { from, lastValueFrom, Observable } from 'rxjs';
import { authOf } from '../common/auth/request-auth';
import { DomainError } from '../common/errors/domain-error';
import { toErrorResponse } from '../common/errors/error-response';
import { ApiResponse } from '../common/http/api-response';
import { REQUEST_ID_HEADER } from '../common/http/request-id';
import { addLogFields } from '../common/logging/request-logging';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { Db } from '../database/db';
import { isSerializationFailure } from '../database/pg-errors';
import { fingerprint } from './canonical-json';
import { IDEMPOTENCY_KEY_HEADER, parseIdempotencyKey } from './idempotency-key-header';
import { KeyScope, IdempotencyStore, StoredKey, StoredRequest } from './idempotency.store';

/** Attempts of a transaction that PostgreSQL aborted as a deadlock or serialization failure. */
const MAX_ATTEMPTS = 3;

export type IdempotencyOutcome = 'executed' | 'replayed' | 'in_progress' | 'mismatch';

/** Thrown inside the transaction to roll it back when a competitor stored the key first. */
class KeyTakenMeanwhile extends Error {}

@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    private readonly db: Db,
    private readonly store: IdempotencyStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    if (!appliesTo(request)) return next.handle();
    const key = parseIdempotencyKey(request.raw.rawHeaders);
    const run = () => lastValueFrom(next.handle()) as Promise<ApiResponse>;
    if (key === null) return from(this.withRetries(() => this.db.transaction(run)));

    const { merchantId, environment } = authOf(request);
    const scope = { merchantId, environment, key };
    const stored = { method: request.method, path: concretePath(request.url), fingerprint: fingerprint(request.body) };
    return from(this.withRetries(() => this.executeKeyed(request, scope, stored, run)));
  }

  private async executeKeyed(
    request: FastifyRequest,
    scope: KeyScope,
    incoming: StoredRequest,
    run: () => Promise<ApiResponse>,
  ): Promise<ApiResponse> {
    try {
      return await this.db.transaction(async () => {
        const claim = await this.store.claim(scope);
        if (claim.stored) return this.answerFromStore(request, claim.stored, incoming);
        if (!claim.locked) {
          this.outcome(request, 'in_progress');
          throw new DomainError(
            'idempotency_in_progress',
            'A request with this Idempotency-Key is still being processed; retry later for its result.',
            IDEMPOTENCY_KEY_HEADER,
          );
        }
        const response = await this.runInSavepoint(request, run);
        const saved = await this.store.save(scope, incoming, response, request.id, this.config.idempotencyTtlSeconds);
        if (!saved) throw new KeyTakenMeanwhile();
        this.outcome(request, 'executed');
        return response;
      });
    } catch (error) {
      if (!(error instanceof KeyTakenMeanwhile)) throw error;
      // Our writes are rolled back; the competitor's committed answer is the answer.
      const stored = await this.store.find(scope);
      if (!stored) throw new Error('idempotency key vanished between save and find');
      return this.answerFromStore(request, stored, incoming);
    }
  }

  /**
   * Runs the handler after a savepoint. Its own 4xx is the answer to store, minus any
   * writes made before the refusal; anything else (5xx) rolls the transaction back.
   */
  private async runInSavepoint(request: FastifyRequest, run: () => Promise<ApiResponse>): Promise<ApiResponse> {
    await this.db.rows('SAVEPOINT idempotent_request');
    try {
      return await run();
    } catch (error) {
      const response = toErrorResponse(error, request.id);
      if (response.status >= 500 || isSerializationFailure(error)) throw error;
      await this.db.rows('ROLLBACK TO SAVEPOINT idempotent_request');
      return response;
    }
  }

  private answerFromStore(request: FastifyRequest, stored: StoredKey, incoming: StoredRequest): ApiResponse {
    const sameEndpoint = stored.method === incoming.method && stored.path === incoming.path;
    if (!sameEndpoint || !stored.fingerprint.equals(incoming.fingerprint)) {
      this.outcome(request, 'mismatch');
      throw new DomainError(
        'idempotency_error',
        sameEndpoint
          ? 'This Idempotency-Key was used with a different request body; use a new key for a new request.'
          : `This Idempotency-Key was used on ${stored.method} ${stored.path}; use a new key for a new request.`,
        IDEMPOTENCY_KEY_HEADER,
      );
    }
    this.outcome(request, 'replayed', { original_request_id: stored.requestId });
    const { response } = stored;
    return new ApiResponse(response.status, response.body, {
      ...response.headers,
      [REQUEST_ID_HEADER]: stored.requestId,
      'Idempotent-Replayed': 'true',
    });
  }

  /** Deadlocks and serialization failures are retried, then answered 409 (SPEC §7.10). */
  private async withRetries(attempt: () => Promise<ApiResponse>): Promise<ApiResponse> {
    for (let i = 1; ; i++) {
      try {
        return await attempt();
      } catch (error) {
        if (!isSerializationFailure(error) || i >= MAX_ATTEMPTS) throw error;
      }
    }
  }

  private outcome(request: FastifyRequest, outcome: IdempotencyOutcome, extra: Record<string, string> = {}) {
    addLogFields(request, { idempotency: outcome, ...extra });
  }
}

/** Every POST under /v1, except the webhook receiver and the admin API (SPEC §7). */
function appliesTo(request: FastifyRequest): boolean {
  const path = concretePath(request.url);
  return (
    request.method === 'POST' &&
    path.startsWith('/v1/') &&
    !path.startsWith('/v1/webhooks/') &&
    !path.startsWith('/v1/admin/')
  );
}

/** The path as routed: no query string, no duplicate or trailing slashes. */
function concretePath(url: string): string {
  const path = url.split('?')[0].replace(/\/{2,}/g, '/');
  return path.length > 1 ? path.replace(/\/$/, '') : path;
}
