import { Injectable } from '@nestjs/common';
import { newId } from '../common/ids';
import { Db } from '../database/db';
import { Environment } from '../database/environment';
import { displayPrefix, hashApiKey } from './api-key';

/** Keys that still authenticate: the same condition as the API-key lookup of every request. */
const ACTIVE = 'revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())';

/** The api_keys table, for rolling and revoking (the per-request lookup is the guard's). */
@Injectable()
export class ApiKeysRepository {
  constructor(private readonly db: Db) {}

  /** Locks the merchant for the transaction, so that rolls and revokes of one merchant queue. */
  async lockMerchant(merchantId: string): Promise<boolean> {
    return (await this.db.one('SELECT 1 FROM merchants WHERE id = $1 FOR UPDATE', [merchantId])) !== null;
  }

  /**
   * Active keys of the environment stop working after `seconds` (at once for 0). A key
   * already due to expire sooner keeps its earlier time. Returns the new expiry, if any key.
   */
  async expireActive(merchantId: string, environment: Environment, seconds: number): Promise<Date | null> {
    const rows = await this.db.rows<{ expires_at: Date }>(
      `UPDATE api_keys
          SET expires_at = LEAST(COALESCE(expires_at, 'infinity'), now() + make_interval(secs => $3))
        WHERE merchant_id = $1 AND environment = $2 AND ${ACTIVE}
       RETURNING expires_at`,
      [merchantId, environment, seconds],
    );
    const times = rows.map((row) => row.expires_at.getTime());
    return times.length === 0 ? null : new Date(Math.max(...times));
  }

  async insert(merchantId: string, environment: Environment, key: string): Promise<Date> {
    const row = await this.db.one<{ created_at: Date }>(
      `INSERT INTO api_keys (id, merchant_id, environment, key_hash, key_prefix)
       VALUES ($1, $2, $3, $4, $5) RETURNING created_at`,
      [newId('key'), merchantId, environment, hashApiKey(key), displayPrefix(key)],
    );
    return row!.created_at;
  }

  /** Revokes every key of the environment that still works, grace periods included. */
  async revokeActive(merchantId: string, environment: Environment): Promise<number> {
    const rows = await this.db.rows(
      `UPDATE api_keys SET revoked_at = now()
        WHERE merchant_id = $1 AND environment = $2 AND ${ACTIVE}
       RETURNING 1`,
      [merchantId, environment],
    );
    return rows.length;
  }
}
