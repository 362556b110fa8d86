import { Injectable } from '@nestjs/common';
import { notFound } from '../common/errors/domain-error';
import { Db } from '../database/db';
import type { Environment } from '../domain/environment';
import { newId } from '../common/ids';
import { displayPrefix, generateApiKey, hashApiKey } from './api-key';
import { ApiKeysRepository } from './api-keys.repository';
import { MerchantsRepository } from './merchants.repository';

export interface RolledApiKey {
  object: 'api_key';
  merchant_id: string;
  environment: Environment;
  /** Shown once: only its hash is stored. */
  api_key: string;
  created_at: string;
  /** When the keys it replaces stop working; null when there were none. */
  previous_keys_expire_at: string | null;
}

export interface RevokedApiKeys {
  object: 'api_key_revocation';
  merchant_id: string;
  environment: Environment;
  /** How many keys stopped working (rolled keys still in their grace period included). */
  revoked: number;
}

/** Rolling and revoking a merchant's secret keys through the admin API (docs/operations.md). */
@Injectable()
export class ApiKeysService {
  constructor(
    private readonly db: Db,
    private readonly keys: ApiKeysRepository,
    private readonly merchants: MerchantsRepository,
  ) {}

  /** A new secret key for the merchant; the key is returned this once, only its hash is kept. */
  async issue(merchantId: string, environment: Environment): Promise<{ key: string; createdAt: Date }> {
    const key = generateApiKey(environment);
    const createdAt = await this.keys.insert({
      id: newId('key'),
      merchantId,
      environment,
      keyHash: hashApiKey(key),
      keyPrefix: displayPrefix(key),
    });
    return { key, createdAt };
  }

  roll(merchantId: string, environment: Environment, expiresInSeconds: number): Promise<RolledApiKey> {
    return this.db.transaction('admin', async () => {
      if (!(await this.merchants.lockForUpdate(merchantId))) throw notFound('merchant', merchantId);
      const expiresAt = await this.keys.expireActive(merchantId, environment, expiresInSeconds);
      const { key, createdAt } = await this.issue(merchantId, environment);
      return {
        object: 'api_key',
        merchant_id: merchantId,
        environment,
        api_key: key,
        created_at: createdAt.toISOString(),
        previous_keys_expire_at: expiresAt?.toISOString() ?? null,
      };
    });
  }

  revoke(merchantId: string, environment: Environment): Promise<RevokedApiKeys> {
    return this.db.transaction('admin', async () => {
      if (!(await this.merchants.lockForUpdate(merchantId))) throw notFound('merchant', merchantId);
      const revoked = await this.keys.revokeActive(merchantId, environment);
      return { object: 'api_key_revocation', merchant_id: merchantId, environment, revoked };
    });
  }
}
