import { Injectable } from '@nestjs/common';
import type { Environment } from '../domain/environment';
import { Db, NamedStatement } from '../database/db';

export interface ActiveApiKey {
  merchantId: string;
  keyHash: Buffer;
}

export interface NewApiKey {
  id: string;
  merchantId: string;
  environment: Environment;
  keyHash: Buffer;
  keyPrefix: string;
}

/**
 * The lookup of every authenticated request: one probe of the unique key_hash index,
 * through the view that defines which keys still authenticate (the migration that
 * created it says why it is a view).
 */
const FIND_ACTIVE: NamedStatement = {
  name: 'kuko_api_key_lookup',
  text: 'SELECT merchant_id, key_hash FROM active_api_keys WHERE key_hash = $1',
};

/** The api_keys table (only hashes: a key is shown once and never stored). */
@Injectable()
export class ApiKeysRepository {
  constructor(private readonly db: Db) {}

  async findActive(keyHash: Buffer): Promise<ActiveApiKey | null> {
    const row = await this.db.one<{ merchant_id: string; key_hash: Buffer }>(FIND_ACTIVE, [keyHash]);
    return row && { merchantId: row.merchant_id, keyHash: row.key_hash };
  }

  /** Stores a new key's hash; returns when it was created. */
  async insert(key: NewApiKey): Promise<Date> {
    const row = await this.db.one<{ created_at: Date }>(
      `INSERT INTO api_keys (id, merchant_id, environment, key_hash, key_prefix)
       VALUES ($1, $2, $3, $4, $5) RETURNING created_at`,
      [key.id, key.merchantId, key.environment, key.keyHash, key.keyPrefix],
    );
    return row!.created_at;
  }

  /**
   * Active keys of the environment stop working after `seconds` (at once for 0). A key
   * already due to expire sooner keeps its earlier time. Returns the new expiry, if any key.
   */
  async expireActive(merchantId: string, environment: Environment, seconds: number): Promise<Date | null> {
    const rows = await this.db.rows<{ expires_at: Date }>(
      `UPDATE api_keys
          SET expires_at = LEAST(COALESCE(expires_at, 'infinity'), now() + make_interval(secs => $3))
        WHERE id IN (SELECT id FROM active_api_keys WHERE merchant_id = $1 AND environment = $2)
       RETURNING expires_at`,
      [merchantId, environment, seconds],
    );
    const times = rows.map((row) => row.expires_at.getTime());
    return times.length === 0 ? null : new Date(Math.max(...times));
  }

  /** Revokes every key of the environment that still works, grace periods included. */
  revokeActive(merchantId: string, environment: Environment): Promise<number> {
    return this.db.execute(
      `UPDATE api_keys SET revoked_at = now()
        WHERE id IN (SELECT id FROM active_api_keys WHERE merchant_id = $1 AND environment = $2)`,
      [merchantId, environment],
    );
  }
}
