import { Injectable } from '@nestjs/common';
import { RequestAuth } from '../common/auth/request-auth';
import { ENVIRONMENTS, Environment } from '../domain/environment';
import { newId } from '../common/ids';
import { ADVISORY_LOCKS, lockTransaction } from '../database/advisory-locks';
import { Db } from '../database/db';
import { ApiKeysService } from './api-keys.service';
import { MerchantsRepository } from './merchants.repository';
import { NotificationSecrets } from './notification-secrets.service';

export interface CreatedMerchant {
  id: string;
  name: string;
  /** Shown once: only their hashes are stored. */
  api_keys: Record<Environment, string>;
  /** Shown once: they sign the merchant's notifications (docs/notifications.md). */
  notification_secrets: Record<Environment, string>;
  created_at: string;
}

@Injectable()
export class MerchantsService {
  constructor(
    private readonly db: Db,
    private readonly merchants: MerchantsRepository,
    private readonly apiKeys: ApiKeysService,
    private readonly notificationSecrets: NotificationSecrets,
  ) {}

  create(name: string): Promise<CreatedMerchant> {
    return this.db.transaction('admin', () => this.insertMerchant(name));
  }

  private async insertMerchant(name: string): Promise<CreatedMerchant> {
    const merchant = await this.merchants.insert(newId('mch'), name);
    const keys = {} as Record<Environment, string>;
    for (const environment of ENVIRONMENTS)
      keys[environment] = (await this.apiKeys.issue(merchant.id, environment)).key;
    const notificationSecrets = await this.notificationSecrets.createForMerchant(merchant.id);
    return {
      id: merchant.id,
      name,
      api_keys: keys,
      notification_secrets: notificationSecrets,
      created_at: merchant.created_at.toISOString(),
    };
  }

  async getAccount({ merchantId, environment }: RequestAuth) {
    const merchant = await this.merchants.findById(merchantId);
    if (!merchant) throw new Error(`merchant ${merchantId} of a valid key is missing`);
    return {
      id: merchant.id,
      object: 'account',
      name: merchant.name,
      environment,
      created_at: merchant.created_at.toISOString(),
    };
  }

  /**
   * The demo merchant of `npm start`'s first run. Serialised by an advisory lock so that
   * several instances starting together create one.
   */
  createDemoMerchantIfNone(): Promise<CreatedMerchant | null> {
    return this.db.transaction('admin', async () => {
      await lockTransaction(this.db, ADVISORY_LOCKS.demoMerchant);
      return (await this.merchants.any()) ? null : this.insertMerchant('Demo merchant');
    });
  }
}
