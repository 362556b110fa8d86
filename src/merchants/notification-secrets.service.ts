import { Inject, Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { RequestAuth } from '../common/auth/request-auth';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { Db } from '../database/db';
import { ENVIRONMENTS, Environment } from '../domain/environment';
import { MerchantsRepository } from './merchants.repository';
import { NotificationSecretsRepository } from './notification-secrets.repository';
import { openSecret, sealSecret } from '../common/secret-box';

/** How long a rolled secret keeps signing beside the new one. */
const ROLL_OVERLAP_SECONDS = 24 * 3600;

/**
 * Per merchant and environment `whsec_` secrets that sign notifications
 * (docs/notifications.md, "Secrets"). Shown once, when created or rolled.
 */
@Injectable()
export class NotificationSecrets {
  constructor(
    private readonly db: Db,
    private readonly repository: NotificationSecretsRepository,
    private readonly merchants: MerchantsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** One secret per environment for a new merchant, in the caller's transaction. */
  async createForMerchant(merchantId: string): Promise<Record<Environment, string>> {
    const secrets = {} as Record<Environment, string>;
    for (const environment of ENVIRONMENTS) {
      secrets[environment] = generateNotificationSecret();
      await this.repository.insertCurrent(merchantId, environment, this.seal(secrets[environment]));
    }
    return secrets;
  }

  /** A new current secret for the key's environment; the old one signs on for 24 hours. */
  roll(auth: RequestAuth): Promise<{ secret: string; previous_expires_at: string }> {
    return this.db.transaction(auth.merchantId, async () => {
      // Concurrent rolls queue on the merchant row, so each retires the one before it.
      await this.merchants.lockForUpdate(auth.merchantId);
      const retired = await this.repository.retireCurrent(auth.merchantId, auth.environment, ROLL_OVERLAP_SECONDS);
      const secret = generateNotificationSecret();
      await this.repository.insertCurrent(auth.merchantId, auth.environment, this.seal(secret));
      // No secret to retire (a merchant from before notifications): nothing signs on.
      return { secret, previous_expires_at: (retired ?? new Date()).toISOString() };
    });
  }

  /** `v1,<sig>` for each valid secret, space-separated (the webhook-signature header). */
  async signature(merchantId: string, environment: Environment, id: string, at: Date, body: string) {
    let secrets = await this.repository.signing(merchantId, environment);
    if (secrets.length === 0) {
      // A merchant created before notifications existed: it gets a secret it can roll to learn.
      await this.repository.insertIfNone(merchantId, environment, this.seal(generateNotificationSecret()));
      secrets = await this.repository.signing(merchantId, environment);
    }
    const key = this.config.notifications.encryptionKey;
    return secrets.map((stored) => new Webhook(openSecret(stored, key)).sign(id, at, body)).join(' ');
  }

  private seal(secret: string): string {
    return sealSecret(secret, this.config.notifications.encryptionKey);
  }
}

/** `whsec_` and the base64 of 32 random bytes (Standard Webhooks). */
function generateNotificationSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}
