import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
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
 * No signing secret of a merchant and environment can be opened under the ENCRYPTION_KEY
 * now set (they were sealed under another): nothing can be signed until the merchant rolls.
 */
export class SecretsUnreadableError extends Error {
  constructor(merchantId: string, environment: Environment, key: Buffer | null) {
    super(
      `no notification secret of merchant ${merchantId} (${environment}) can be opened ${underKey(key)}; ` +
        'the merchant must roll its secret',
    );
  }
}

/** Which key a secret could not be opened under, in words: there may be none. */
function underKey(key: Buffer | null): string {
  return key ? 'under the ENCRYPTION_KEY now set' : 'without ENCRYPTION_KEY, which is not set';
}

/**
 * Per merchant and environment `whsec_` secrets that sign notifications
 * (docs/notifications.md, "Secrets"). Shown once, when created or rolled.
 */
@Injectable()
export class NotificationSecrets implements OnApplicationBootstrap {
  private readonly logger = new Logger(NotificationSecrets.name);

  constructor(
    private readonly db: Db,
    private readonly repository: NotificationSecretsRepository,
    private readonly merchants: MerchantsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * An instance that delivers says at start-up when the newest secret stored encrypted
   * cannot be opened: ENCRYPTION_KEY left out, or changed. Otherwise it would start as
   * usual and every attempt for those merchants would fail as `secret_unreadable`.
   */
  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.notifications.workers) return;
    const newest = await this.repository.newestSealed().catch((error: Error) => {
      this.logger.debug(`the check of ENCRYPTION_KEY could not read the secrets: ${error.message}`);
      return null;
    });
    if (newest === null || this.open(newest.secret) !== null) return;
    this.logger.warn(
      `the newest of the ${newest.count} notification secrets stored encrypted (of merchant ${newest.merchant_id}) ` +
        `cannot be opened ${underKey(this.key)}: notifications to the merchants whose secrets were sealed under ` +
        'another key fail as secret_unreadable ' +
        'until ENCRYPTION_KEY is the one they were sealed under, or each merchant rolls its secret',
    );
  }

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
    const opened = secrets.map((stored) => this.open(stored));
    const readable = opened.filter((secret) => secret !== null);
    if (readable.length < opened.length) {
      this.logger.warn(
        `${opened.length - readable.length} of the ${opened.length} notification secrets of merchant ${merchantId} ` +
          `(${environment}) cannot be opened ${underKey(this.key)} and do not sign; ` +
          'a secret sealed under a lost key is replaced by a roll',
      );
    }
    if (readable.length === 0) throw new SecretsUnreadableError(merchantId, environment, this.key);
    return readable.map((secret) => new Webhook(secret).sign(id, at, body)).join(' ');
  }

  /**
   * A stored secret in clear, or null when it was sealed under another ENCRYPTION_KEY (or
   * under one no longer set): such a secret can sign nothing, but must not stop those
   * beside it, above all the one a roll has just made.
   */
  private open(stored: string): string | null {
    try {
      return openSecret(stored, this.key);
    } catch {
      return null;
    }
  }

  private seal(secret: string): string {
    return sealSecret(secret, this.key);
  }

  private get key(): Buffer | null {
    return this.config.notifications.encryptionKey;
  }
}

/** `whsec_` and the base64 of 32 random bytes (Standard Webhooks). */
function generateNotificationSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}
