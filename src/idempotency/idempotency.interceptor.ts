/**
 * The Idempotency-Key layer (docs/idempotency.md), on every route marked @Idempotent():
 *
 * - Without a key, the handler runs as it is: the work that needs a transaction opens
 *   one (Db.transaction), and a one-statement create runs in autocommit, two round trips
 *   in all (docs/decisions.md, "Transactions are opened by the work that needs one").
 * - With a key whose answer is stored and unexpired (read by ApiKeyGuard with the API
 *   key), that answer is replayed if endpoint and body fingerprint match, else refused
 *   (400 idempotency_error). No transaction is opened.
 * - Otherwise one READ COMMITTED transaction holds everything:
 *   1. with BEGIN, in the same round trip: try the key's advisory lock and read its
 *      answer again (a competitor may have just stored one), then SAVEPOINT. No lock:
 *      another request holds the key, 409 at once, never queued.
 *   2. the handler. A 2xx, or a 4xx the request itself caused (validation, 404, business
 *      refusal: its writes rolled back to the savepoint), is the answer to store.
 *   3. with COMMIT, in the same round trip: store the answer (replacing an expired one
 *      the purge has not removed yet). Business writes and stored answer become visible
 *      together or not at all. If a competitor stored the key since step 1's snapshot,
 *      the insert fails, everything rolls back, and its answer is replayed instead.
 *   A 5xx rolls the whole transaction back: nothing stored, the key is free again.
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
import { openSecret, sealSecret } from '../common/secret-box';
import { addLogFields } from '../common/logging/request-logging';
import type { IdempotencyOutcome } from '../common/metrics/metrics';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { Db } from '../database/db';
import { isSerializationFailure, isStalePlan, isUniqueViolation } from '../database/pg-errors';
import { fingerprint } from './canonical-json';
import { IDEMPOTENCY_KEY_HEADER, parseIdempotencyKey } from './idempotency-key-header';
import { idempotentOptions } from './idempotent.decorator';
import { concretePath } from './idempotency-scope';
import {
  IdempotencyKeysRepository,
  KEY_CONSTRAINT,
  KeyScope,
  StoredKey,
  StoredRequest,
} from './idempotency-keys.repository';
import { retryPause, shouldStore } from './idempotency-policy';

/** Attempts of a transaction that PostgreSQL aborted as a deadlock or serialization failure. */
const MAX_ATTEMPTS = 3;
const SAVEPOINT_NAME = 'idempotent_request';
const SAVEPOINT = `SAVEPOINT ${SAVEPOINT_NAME}`;
const ROLLBACK_TO_SAVEPOINT = `ROLLBACK TO SAVEPOINT ${SAVEPOINT_NAME}`;
/** What a client that meets a key in progress should wait before it retries, in seconds. */
const IN_PROGRESS_RETRY_AFTER = '1';

@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    private readonly db: Db,
    private readonly keys: IdempotencyKeysRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const options = idempotentOptions(context);
    if (options === null) return next.handle();
    const key = parseIdempotencyKey(request.raw.rawHeaders);
    const run = () => lastValueFrom(next.handle()) as Promise<ApiResponse>;
    if (key === null) return from(this.withRetries(run, false));

    const { merchantId, environment } = authOf(request);
    const scope = { merchantId, environment, key };
    const incoming = {
      method: request.method,
      path: concretePath(request),
      fingerprint: fingerprint(request.body),
    };
    const prefetched = request.prefetchedAnswer?.key === key ? request.prefetchedAnswer.stored : null;
    if (prefetched) return from([this.answerFromStore(request, prefetched, incoming)]);
    const sealed = options.answerHoldsSecret === true;
    return from(this.withRetries(() => this.executeKeyed(request, scope, incoming, run, sealed), true));
  }

  private async executeKeyed(
    request: FastifyRequest,
    scope: KeyScope,
    incoming: StoredRequest,
    run: () => Promise<ApiResponse>,
    sealed: boolean,
  ): Promise<ApiResponse> {
    // The claim comes with BEGIN, after a write slot: when the merchant's slots are all
    // taken (requests queued on a hot row, here or, behind a pooler, on any instance), a
    // twin would wait for one before learning that its key is held. It is asked before
    // waiting, so that it is answered 409 at once (docs/idempotency.md).
    const beforeWaiting = async () => {
      if (!(await this.keys.isHeld(scope))) return;
      this.logOutcome(request, 'in_progress');
      throw keyInProgress(IN_PROGRESS_MESSAGE);
    };
    let executed = false;
    try {
      const response = await this.db.transaction(
        scope.merchantId,
        async ([claimRows]) => {
          const claim = this.keys.toClaim(claimRows[0]);
          if (claim.stored) return this.answerFromStore(request, claim.stored, incoming);
          if (!claim.locked) {
            this.logOutcome(request, 'in_progress');
            throw keyInProgress(IN_PROGRESS_MESSAGE);
          }
          const answer = await this.runAfterSavepoint(request, run);
          const stored = sealed ? this.sealedAnswer(answer) : answer;
          this.db.beforeCommit(
            ...this.keys.saveStatements(scope, claim, incoming, stored, request.id, this.config.idempotencyTtlSeconds),
          );
          executed = true;
          return answer;
        },
        [this.keys.claimStatement(scope), SAVEPOINT],
        { beforeWaiting },
      );
      if (executed) this.logOutcome(request, 'executed');
      return response;
    } catch (error) {
      if (!isUniqueViolation(error, KEY_CONSTRAINT)) throw error;
      // A competitor stored this key after our claim read it: ours is rolled back, theirs is the answer.
      const stored = await this.keys.find(scope);
      if (!stored) throw new Error('idempotency key vanished after a unique violation');
      return this.answerFromStore(request, stored, incoming);
    }
  }

  /**
   * Runs the handler after the savepoint. Its own 4xx is the answer to store, minus any
   * writes made before the refusal; anything else (5xx) rolls the transaction back.
   */
  private async runAfterSavepoint(request: FastifyRequest, run: () => Promise<ApiResponse>): Promise<ApiResponse> {
    try {
      return await run();
    } catch (error) {
      const response = toErrorResponse(error, request.id);
      if (!shouldStore(response.status, isSerializationFailure(error))) throw error;
      await this.db.rows(ROLLBACK_TO_SAVEPOINT);
      return response;
    }
  }

  private answerFromStore(request: FastifyRequest, stored: StoredKey, incoming: StoredRequest): ApiResponse {
    const sameEndpoint = stored.method === incoming.method && stored.path === incoming.path;
    if (!sameEndpoint || !stored.fingerprint.equals(incoming.fingerprint)) {
      this.logOutcome(request, 'mismatch');
      throw new DomainError(
        'idempotency_error',
        sameEndpoint
          ? 'This Idempotency-Key was used with a different request body; use a new key for a new request.'
          : `This Idempotency-Key was used on ${stored.method} ${stored.path}; use a new key for a new request.`,
        IDEMPOTENCY_KEY_HEADER,
      );
    }
    const { response } = stored;
    const body = this.openedBody(request, response);
    this.logOutcome(request, 'replayed', { original_request_id: stored.requestId });
    return new ApiResponse(response.status, body, {
      ...response.headers,
      [REQUEST_ID_HEADER]: stored.requestId,
      'Idempotent-Replayed': 'true',
    });
  }

  /**
   * A stored answer's body: a sealed one (see sealedAnswer) opened, any other as it is.
   * One sealed under an ENCRYPTION_KEY that is gone can never be replayed: the client is
   * told to use a new key (400, as for a key it cannot reuse), not a 500 for 24 hours.
   */
  private openedBody(request: FastifyRequest, response: ApiResponse): string {
    try {
      return openSecret(response.json, this.config.notifications.encryptionKey);
    } catch {
      this.logOutcome(request, 'unreadable');
      throw new DomainError(
        'idempotency_error',
        'The answer stored under this Idempotency-Key was sealed under another ENCRYPTION_KEY and cannot be ' +
          'replayed; use a new key.',
        IDEMPOTENCY_KEY_HEADER,
      );
    }
  }

  /**
   * The answer of a route whose answer shows a secret, as it is stored: its body sealed
   * under ENCRYPTION_KEY (as the secret is where it is kept), else as it is.
   */
  private sealedAnswer(answer: ApiResponse): ApiResponse {
    return new ApiResponse(
      answer.status,
      sealSecret(answer.json, this.config.notifications.encryptionKey),
      answer.headers,
    );
  }

  /**
   * Deadlocks and serialization failures are retried after a short jittered pause, so the
   * competitors do not collide again at once. When they keep failing, a keyed request is
   * answered 409 (retry with the same key), an unkeyed one 503; neither as a bare 500.
   * A plan made stale by a schema change is retried the same way: Db plans the next
   * attempt afresh.
   */
  private async withRetries(attempt: () => Promise<ApiResponse>, keyed: boolean): Promise<ApiResponse> {
    for (let i = 1; ; i++) {
      try {
        return await attempt();
      } catch (error) {
        const stalePlan = isStalePlan(error);
        if (!isSerializationFailure(error) && !stalePlan) throw error;
        // Out of attempts: a keyed conflict asks for a retry with the same key; anything
        // else answers as itself, a 503 (toDomainError).
        if (i >= MAX_ATTEMPTS) throw keyed && !stalePlan ? keyInProgress(CONFLICT_MESSAGE) : error;
        await new Promise((resume) => setTimeout(resume, retryPause(i)));
      }
    }
  }

  private logOutcome(request: FastifyRequest, outcome: IdempotencyOutcome, extra: Record<string, string> = {}) {
    addLogFields(request, { idempotency: outcome, ...extra });
  }
}

const IN_PROGRESS_MESSAGE = 'A request with this Idempotency-Key is still being processed; retry later for its result.';
const CONFLICT_MESSAGE = 'A concurrent request touched the same data; retry with the same Idempotency-Key.';

function keyInProgress(message: string): DomainError {
  return new DomainError('idempotency_in_progress', message, IDEMPOTENCY_KEY_HEADER, {
    'Retry-After': IN_PROGRESS_RETRY_AFTER,
  });
}
