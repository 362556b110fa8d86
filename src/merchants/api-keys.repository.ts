import { Injectable } from '@nestjs/common';
import type { Environment } from '../common/domain/environment';
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

/** The lookup of every authenticated request: one indexed statement on the key's hash. */
const FIND_ACTIVE: NamedStatement = {
  name: 'kuko_api_key_lookup',
  text: 'SELECT merchant_id, key_hash FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL',
};

/** The api_keys table (only hashes: a key is shown once and never stored). */
@Injectable()
export class ApiKeysRepository {
  constructor(private readonly db: Db) {}

  async findActive(keyHash: Buffer): Promise<ActiveApiKey | null> {
    const row = await this.db.one<{ merchant_id: string; key_hash: Buffer }>(FIND_ACTIVE, [keyHash]);
    return row && { merchantId: row.merchant_id, keyHash: row.key_hash };
  }

  async insert(key: NewApiKey): Promise<void> {
    await this.db.rows(
      'INSERT INTO api_keys (id, merchant_id, environment, key_hash, key_prefix) VALUES ($1, $2, $3, $4, $5)',
      [key.id, key.merchantId, key.environment, key.keyHash, key.keyPrefix],
    );
  }
}
