import { Injectable } from '@nestjs/common';
import { ApiResponse } from '../common/http/api-response';
import { Db } from '../database/db';
import { Environment } from '../database/environment';

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
}

/** Headers that belong to the answer itself and are replayed with it (SPEC §7.4). */
const REPLAYED_HEADERS = ['Location'];

// The lock id: a 64-bit hash of the key's scope. Computed by PostgreSQL, so every
// instance agrees on it whatever its language or version.
const LOCK_ID = `hashtextextended($1 || '/' || $2 || '/' || $3, 0)`;

/**
 * The idempotency_keys table. Every statement runs in the caller's transaction
 * (TransactionHost.tx), which is what puts the stored answer and the business writes in
 * one commit.
 */
@Injectable()
export class IdempotencyStore {
  constructor(private readonly db: Db) {}

  /**
   * Tries the key's transaction-scoped advisory lock and reads the stored answer, in one
   * round trip. The read's snapshot may predate a competitor's commit that released the
   * lock; save() detects that case (see there).
   */
  async claim(scope: KeyScope): Promise<Claim> {
    const row = await this.db.one<KeyRow & { locked: boolean }>(
      `SELECT pg_try_advisory_xact_lock(${LOCK_ID}) AS locked, k.*
         FROM (SELECT 1) AS one
         LEFT JOIN idempotency_keys k
           ON k.merchant_id = $1 AND k.environment = $2 AND k.key = $3 AND k.expires_at > now()`,
      [scope.merchantId, scope.environment, scope.key],
    );
    return { locked: row!.locked, stored: row!.method === null ? null : toStoredKey(row!) };
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

  /**
   * Stores the answer under the key, replacing an expired one. Returns false when an
   * unexpired answer is already there: a competitor committed the key after this
   * transaction's claim read it; the caller must roll back and replay that answer.
   */
  async save(scope: KeyScope, request: StoredRequest, response: ApiResponse, requestId: string, ttlSeconds: number) {
    const headers = Object.fromEntries(
      REPLAYED_HEADERS.filter((name) => name in response.headers).map((name) => [name, response.headers[name]]),
    );
    const rows = await this.db.rows(
      `INSERT INTO idempotency_keys AS k
              (merchant_id, environment, key, method, path, fingerprint,
               response_status, response_body, response_headers, request_id, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now() + make_interval(secs => $11))
       ON CONFLICT (merchant_id, environment, key) DO UPDATE
          SET method = EXCLUDED.method, path = EXCLUDED.path, fingerprint = EXCLUDED.fingerprint,
              response_status = EXCLUDED.response_status, response_body = EXCLUDED.response_body,
              response_headers = EXCLUDED.response_headers, request_id = EXCLUDED.request_id,
              created_at = now(), expires_at = EXCLUDED.expires_at
        WHERE k.expires_at <= now()
       RETURNING 1`,
      [
        scope.merchantId,
        scope.environment,
        scope.key,
        request.method,
        request.path,
        request.fingerprint,
        response.status,
        response.json,
        headers,
        requestId,
        ttlSeconds,
      ],
    );
    return rows.length === 1;
  }
}

interface KeyRow {
  method: string;
  path: string;
  fingerprint: Buffer;
  response_status: number;
  response_body: string;
  response_headers: Record<string, string>;
  request_id: string;
}

function toStoredKey(row: KeyRow): StoredKey {
  return {
    method: row.method,
    path: row.path,
    fingerprint: row.fingerprint,
    requestId: row.request_id,
    response: new ApiResponse(row.response_status, row.response_body, row.response_headers),
  };
}
