import { Injectable } from '@nestjs/common';
import { ApiResponse } from '../common/http/api-response';
import { Db } from '../database/db';
import { Environment } from '../database/environment';
import { literal } from '../database/literal';

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
  /** An expired answer is still stored (not purged yet): saving must replace it. */
  expiredAnswer: boolean;
}

/** Headers that belong to the answer itself and are replayed with it (SPEC §7.4). */
const REPLAYED_HEADERS = ['Location'];

/** The unique key of idempotency_keys: a violation means a competitor stored the key first. */
export const KEY_CONSTRAINT = 'idempotency_keys_pkey';

/** The columns of a stored answer (KeyRow), from the join below. */
export const STORED_ANSWER_COLUMNS =
  'k.method, k.path, k.fingerprint, k.response_status, k.response_body, k.response_headers, k.request_id';

/**
 * The stored, unexpired answer of a key, for a LEFT JOIN from a row that has the scope:
 * `$merchant`, `$environment`, `$key` are replaced by SQL expressions.
 */
export function storedAnswerJoin(merchant: string, environment: string, key: string): string {
  return `LEFT JOIN idempotency_keys k
            ON k.merchant_id = ${merchant} AND k.environment = ${environment} AND k.key = ${key}
           AND k.expires_at > now()`;
}

/**
 * The statements that travel with BEGIN and COMMIT, prepared once per connection (Db),
 * so that each request only EXECUTEs a cached plan with escaped literals.
 *
 * claim: tries the key's transaction-scoped advisory lock and reads what is stored under
 * the key, and whether it is still live. The lock id is a 64-bit hash of the scope,
 * computed by PostgreSQL so every instance agrees. The read's snapshot may predate a
 * competitor's commit that released the lock; saving then fails on KEY_CONSTRAINT and
 * the caller replays the competitor's answer.
 *
 * delete-expired (only when the claim saw an expired answer) + insert: store the answer.
 * An answer that appeared since the claim makes the INSERT fail on KEY_CONSTRAINT, which
 * rolls the whole transaction back.
 */
export const PREPARED_STATEMENTS = [
  `PREPARE kuko_idempotency_claim(text, text, text) AS
     SELECT pg_try_advisory_xact_lock(hashtextextended($1 || '/' || $2 || '/' || $3, 0)) AS locked,
            k.expires_at > now() AS live, ${STORED_ANSWER_COLUMNS}
       FROM (SELECT 1) AS one
       LEFT JOIN idempotency_keys k ON k.merchant_id = $1 AND k.environment = $2 AND k.key = $3`,
  `PREPARE kuko_idempotency_delete_expired(text, text, text) AS
     DELETE FROM idempotency_keys
      WHERE merchant_id = $1 AND environment = $2 AND key = $3 AND expires_at <= now()`,
  `PREPARE kuko_idempotency_insert(text, text, text, text, text, bytea, smallint, text, jsonb, text, int) AS
     INSERT INTO idempotency_keys
            (merchant_id, environment, key, method, path, fingerprint,
             response_status, response_body, response_headers, request_id, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now() + make_interval(secs => $11))`,
];

/** The idempotency_keys table. */
@Injectable()
export class IdempotencyStore {
  constructor(private readonly db: Db) {
    db.prepareOnEveryConnection(PREPARED_STATEMENTS);
  }

  claimStatement({ merchantId, environment, key }: KeyScope): string {
    return `EXECUTE kuko_idempotency_claim(${literal(merchantId)}, ${literal(environment)}, ${literal(key)})`;
  }

  toClaim(row: KeyRow & { locked: boolean; live: boolean | null }): Claim {
    return { locked: row.locked, stored: row.live ? toStoredKey(row) : null, expiredAnswer: row.live === false };
  }

  saveStatements(
    scope: KeyScope,
    claim: Claim,
    request: StoredRequest,
    response: ApiResponse,
    requestId: string,
    ttlSeconds: number,
  ): string[] {
    const [m, e, k] = [literal(scope.merchantId), literal(scope.environment), literal(scope.key)];
    const headers = Object.fromEntries(
      REPLAYED_HEADERS.filter((name) => name in response.headers).map((name) => [name, response.headers[name]]),
    );
    const values = [
      m, e, k, literal(request.method), literal(request.path), literal(request.fingerprint),
      literal(response.status), literal(response.json), literal(JSON.stringify(headers)), literal(requestId),
      literal(ttlSeconds),
    ];
    const insert = `EXECUTE kuko_idempotency_insert(${values.join(', ')})`;
    return claim.expiredAnswer ? [`EXECUTE kuko_idempotency_delete_expired(${m}, ${e}, ${k})`, insert] : [insert];
  }

  /** The unexpired answer under a key, outside any lock. */
  async find(scope: KeyScope): Promise<StoredKey | null> {
    const row = await this.db.one<KeyRow>(
      `SELECT * FROM idempotency_keys
        WHERE merchant_id = $1 AND environment = $2 AND key = $3 AND expires_at > now()`,
      [scope.merchantId, scope.environment, scope.key],
    );
    return row ? toStoredKey(row) : null;
  }
}

/** The columns of idempotency_keys, all null when a LEFT JOIN found nothing. */
export interface KeyRow {
  method: string | null;
  path: string;
  fingerprint: Buffer;
  response_status: number;
  response_body: string;
  response_headers: Record<string, string>;
  request_id: string;
}

export function toStoredKey(row: KeyRow): StoredKey | null {
  if (row.method === null) return null;
  return {
    method: row.method,
    path: row.path,
    fingerprint: row.fingerprint,
    requestId: row.request_id,
    response: new ApiResponse(row.response_status, row.response_body, row.response_headers),
  };
}
