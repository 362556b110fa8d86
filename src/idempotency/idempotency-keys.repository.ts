import { Injectable } from '@nestjs/common';
import type { Environment } from '../domain/environment';
import { ApiResponse } from '../common/http/api-response';
import { idempotencyKeyLockId } from '../database/advisory-locks';
import { BatchedStatement, Call, Connection, Db, NamedStatement } from '../database/db';

export interface KeyScope {
  merchantId: string;
  environment: Environment;
  key: string;
}

export interface StoredRequest {
  method: string;
  path: string;
  fingerprint: Buffer;
}

export interface StoredKey extends StoredRequest {
  response: ApiResponse;
  requestId: string;
}

export interface Claim {
  /** This transaction now holds the key's advisory lock. */
  locked: boolean;
  /** The unexpired answer stored under the key, if any. */
  stored: StoredKey | null;
  /** An expired answer is still stored (not purged yet): saving must delete it first. */
  replacesExpiredAnswer: boolean;
}

/** An API key found by its hash, with the answer stored under the request's Idempotency-Key. */
export interface ApiKeyWithAnswer {
  merchantId: string;
  keyHash: Buffer;
  stored: StoredKey | null;
}

/** Headers that belong to the answer itself and are replayed with it (docs/idempotency.md). */
const REPLAYED_HEADERS = ['Location'];

/** The unique key of idempotency_keys: a violation means a competitor stored the key first. */
export const KEY_CONSTRAINT = 'idempotency_keys_pkey';

const ANSWER_COLUMNS =
  'k.method, k.path, k.fingerprint, k.response_status, k.response_body, k.response_headers, k.request_id';

/**
 * The API-key lookup of a keyed write, with the unexpired answer stored under its
 * Idempotency-Key read in the same statement, so that a replay costs one round trip in all.
 * It is the one statement here that reads another table (active_api_keys): the round trip is
 * the point, and the API-key guard calls it through findApiKeyWithAnswer().
 */
const API_KEY_WITH_ANSWER: NamedStatement = {
  name: 'kuko_api_key_lookup_with_answer',
  text: `SELECT a.merchant_id, a.key_hash, ${ANSWER_COLUMNS}
           FROM active_api_keys a
           LEFT JOIN idempotency_keys k
             ON k.merchant_id = a.merchant_id AND k.environment = $2 AND k.key = $3 AND k.expires_at > now()
          WHERE a.key_hash = $1`,
};

/**
 * The statements that travel with BEGIN and COMMIT (Db.call: a prepared plan executed
 * with escaped literals, the same statement inline behind a transaction pooler, or a
 * named statement behind one that keeps them; BatchedStatement).
 *
 * claim: tries the key's transaction-scoped advisory lock (docs/idempotency.md) and reads
 * what is stored under the key, and whether it is still live. The read's snapshot may
 * predate a competitor's commit that released the lock; saving then fails on
 * KEY_CONSTRAINT and the caller replays the competitor's answer.
 *
 * delete-expired (only when the claim saw an expired answer) + insert: store the answer.
 * An answer that appeared since the claim makes the insert fail on KEY_CONSTRAINT, which
 * rolls the whole transaction back.
 */
const CLAIM: BatchedStatement = {
  name: 'kuko_idempotency_claim',
  types: ['text', 'text', 'text'],
  text: `SELECT pg_try_advisory_xact_lock(${idempotencyKeyLockId('$1', '$2', '$3')}) AS locked,
                k.expires_at > now() AS live, ${ANSWER_COLUMNS}
           FROM (SELECT 1) AS one
           LEFT JOIN idempotency_keys k ON k.merchant_id = $1 AND k.environment = $2 AND k.key = $3`,
};
const DELETE_EXPIRED: BatchedStatement = {
  name: 'kuko_idempotency_delete_expired',
  types: ['text', 'text', 'text'],
  text: `DELETE FROM idempotency_keys
          WHERE merchant_id = $1 AND environment = $2 AND key = $3 AND expires_at <= now()`,
};
const INSERT: BatchedStatement = {
  name: 'kuko_idempotency_insert',
  types: ['text', 'text', 'text', 'text', 'text', 'bytea', 'smallint', 'text', 'jsonb', 'text', 'int'],
  text: `INSERT INTO idempotency_keys
                (merchant_id, environment, key, method, path, fingerprint,
                 response_status, response_body, response_headers, request_id, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now() + make_interval(secs => $11))`,
};

// ctid makes the outer delete a TID scan of exactly the rows the inner select locked.
// ORDER BY keeps the batch on the expires_at index: without it PostgreSQL may choose a
// sequential scan that reads past every live row first (measured: 0.9 s batches instead
// of 10 ms with 2 M live rows ahead of the expired ones). SKIP LOCKED leaves rows that a
// request holds to the next run.
const DELETE_EXPIRED_BATCH = `
  DELETE FROM idempotency_keys
   WHERE ctid = ANY (ARRAY(
     SELECT ctid FROM idempotency_keys
      WHERE expires_at <= now()
      ORDER BY expires_at
      LIMIT $1
        FOR UPDATE SKIP LOCKED))`;

/**
 * Whether another transaction holds the key's lock now: tried in a statement of its own,
 * outside any transaction, so a lock it gets ends with that statement.
 */
const HELD: NamedStatement = {
  name: 'kuko_idempotency_key_held',
  text: `SELECT NOT pg_try_advisory_xact_lock(${idempotencyKeyLockId('$1', '$2', '$3')}) AS held`,
};

/** The idempotency_keys table. */
@Injectable()
export class IdempotencyKeysRepository {
  constructor(private readonly db: Db) {
    db.prepareOnEveryConnection([CLAIM, DELETE_EXPIRED, INSERT]);
  }

  /** Whether a request running elsewhere holds the key (see HELD); takes no lock that lasts. */
  async isHeld({ merchantId, environment, key }: KeyScope): Promise<boolean> {
    const row = await this.db.one<{ held: boolean }>(HELD, [merchantId, environment, key]);
    return row?.held === true;
  }

  /** The statement sent with BEGIN: lock the key and read what it holds (see toClaim). */
  claimStatement({ merchantId, environment, key }: KeyScope): Call {
    return this.db.call(CLAIM, [merchantId, environment, key]);
  }

  toClaim(row: unknown): Claim {
    const claim = row as AnswerRow & { locked: boolean; live: boolean | null };
    return {
      locked: claim.locked,
      stored: claim.live ? toStoredKey(claim) : null,
      replacesExpiredAnswer: claim.live === false,
    };
  }

  /** The statements sent with COMMIT that store the answer under the key. */
  saveStatements(
    scope: KeyScope,
    claim: Claim,
    request: StoredRequest,
    response: ApiResponse,
    requestId: string,
    ttlSeconds: number,
  ): Call[] {
    const scoped = [scope.merchantId, scope.environment, scope.key];
    const headers = Object.fromEntries(
      REPLAYED_HEADERS.filter((name) => name in response.headers).map((name) => [name, response.headers[name]]),
    );
    const insert = this.db.call(INSERT, [
      ...scoped,
      ...[request.method, request.path, request.fingerprint, response.status, response.json],
      ...[JSON.stringify(headers), requestId, ttlSeconds],
    ]);
    if (!claim.replacesExpiredAnswer) return [insert];
    return [this.db.call(DELETE_EXPIRED, scoped), insert];
  }

  /** The unexpired answer under a key, outside any lock. */
  async find(scope: KeyScope): Promise<StoredKey | null> {
    const row = await this.db.one<AnswerRow>(
      `SELECT * FROM idempotency_keys
        WHERE merchant_id = $1 AND environment = $2 AND key = $3 AND expires_at > now()`,
      [scope.merchantId, scope.environment, scope.key],
    );
    return row ? toStoredKey(row) : null;
  }

  /** An active API key by its hash, with what is stored under `key` for its merchant. */
  async findApiKeyWithAnswer(keyHash: Buffer, environment: Environment, key: string): Promise<ApiKeyWithAnswer | null> {
    const row = await this.db.one<AnswerRow & { merchant_id: string; key_hash: Buffer }>(API_KEY_WITH_ANSWER, [
      keyHash,
      environment,
      key,
    ]);
    return row && { merchantId: row.merchant_id, keyHash: row.key_hash, stored: toStoredKey(row) };
  }

  /** Deletes up to `limit` expired keys on the purge's connection (autocommit); returns how many. */
  deleteExpiredBatch(connection: Connection, limit: number): Promise<number> {
    return connection.execute(DELETE_EXPIRED_BATCH, [limit]);
  }
}

/** The columns of a stored answer; all null when the LEFT JOIN found nothing. */
interface AnswerRow {
  method: string | null;
  path: string;
  fingerprint: Buffer;
  response_status: number;
  response_body: string;
  response_headers: Record<string, string>;
  request_id: string;
}

function toStoredKey(row: AnswerRow): StoredKey | null {
  if (row.method === null) return null;
  return {
    method: row.method,
    path: row.path,
    fingerprint: row.fingerprint,
    requestId: row.request_id,
    response: new ApiResponse(row.response_status, row.response_body, row.response_headers),
  };
}
