import { Injectable } from '@nestjs/common';
import { Db, NamedStatement } from '../database/db';
import { Environment } from '../domain/environment';

/** The signing secrets of one merchant and environment: the current one and those rolled < 24 h ago. */
const SIGNING_SECRETS: NamedStatement = {
  name: 'kuko_notification_signing_secrets',
  text: `SELECT secret FROM notification_secrets
          WHERE merchant_id = $1 AND environment = $2 AND (expires_at IS NULL OR expires_at > now())
          ORDER BY id DESC`,
};

@Injectable()
export class NotificationSecretsRepository {
  constructor(private readonly db: Db) {}

  async insertCurrent(merchantId: string, environment: Environment, sealed: string): Promise<void> {
    await this.db.rows('INSERT INTO notification_secrets (merchant_id, environment, secret) VALUES ($1, $2, $3)', [
      merchantId,
      environment,
      sealed,
    ]);
  }

  async insertIfNone(merchantId: string, environment: Environment, sealed: string): Promise<void> {
    await this.db.rows(
      `INSERT INTO notification_secrets (merchant_id, environment, secret) VALUES ($1, $2, $3)
       ON CONFLICT (merchant_id, environment) WHERE expires_at IS NULL DO NOTHING`,
      [merchantId, environment, sealed],
    );
  }

  /**
   * Retires the current secret (it signs on for `overlapSeconds`) in the caller's
   * transaction; returns when it stops signing, or null if there was none.
   */
  async retireCurrent(merchantId: string, environment: Environment, overlapSeconds: number): Promise<Date | null> {
    const retired = await this.db.one<{ expires_at: Date }>(
      `UPDATE notification_secrets SET expires_at = now() + make_interval(secs => $3)
        WHERE merchant_id = $1 AND environment = $2 AND expires_at IS NULL
       RETURNING expires_at`,
      [merchantId, environment, overlapSeconds],
    );
    return retired?.expires_at ?? null;
  }

  /** The newest secret stored encrypted (enc:v1:…, secret-box.ts), and how many are; null when none is. */
  async newestSealed(): Promise<{ secret: string; merchant_id: string; count: number } | null> {
    return this.db.one(
      `SELECT secret, merchant_id, count(*) OVER ()::int AS count FROM notification_secrets
        WHERE secret LIKE 'enc:v1:%' ORDER BY id DESC LIMIT 1`,
    );
  }

  async signing(merchantId: string, environment: Environment): Promise<string[]> {
    const rows = await this.db.rows<{ secret: string }>(SIGNING_SECRETS, [merchantId, environment]);
    return rows.map((row) => row.secret);
  }
}
