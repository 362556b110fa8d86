import { Injectable } from '@nestjs/common';
import { RequestAuth } from '../common/auth/request-auth';
import { newId } from '../common/ids';
import { Db } from '../database/db';
import { ENVIRONMENTS, Environment } from '../database/environment';
import { NotificationSecrets } from '../notifications/notification-secrets.service';
import { displayPrefix, generateApiKey, hashApiKey } from './api-key';

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
    private readonly notificationSecrets: NotificationSecrets,
  ) {}

  create(name: string): Promise<CreatedMerchant> {
    return this.db.transaction(() => this.insertMerchant(name));
  }

  private async insertMerchant(name: string): Promise<CreatedMerchant> {
    const id = newId('mch');
    const merchant = await this.db.one<{ created_at: Date }>(
      'INSERT INTO merchants (id, name) VALUES ($1, $2) RETURNING created_at',
      [id, name],
    );
    const keys = {} as Record<Environment, string>;
    for (const environment of ENVIRONMENTS) {
      keys[environment] = generateApiKey(environment);
      await this.db.rows(
        `INSERT INTO api_keys (id, merchant_id, environment, key_hash, key_prefix) VALUES ($1, $2, $3, $4, $5)`,
        [newId('key'), id, environment, hashApiKey(keys[environment]), displayPrefix(keys[environment])],
      );
    }
    const notificationSecrets = await this.notificationSecrets.createForMerchant(id);
    return {
      id,
      name,
      api_keys: keys,
      notification_secrets: notificationSecrets,
      created_at: merchant!.created_at.toISOString(),
    };
  }

  async getAccount({ merchantId, environment }: RequestAuth) {
    const merchant = await this.db.one<{ id: string; name: string; created_at: Date }>(
      'SELECT id, name, created_at FROM merchants WHERE id = $1',
      [merchantId],
    );
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
    return this.db.transaction(async () => {
      await this.db.rows(`SELECT pg_advisory_xact_lock(hashtext('kukopay:demo-merchant'))`);
      const none = await this.db.one('SELECT 1 FROM merchants LIMIT 1');
      return none === null ? this.insertMerchant('Demo merchant') : null;
    });
  }
}
