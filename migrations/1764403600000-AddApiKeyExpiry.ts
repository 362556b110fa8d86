import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A rolled key stays valid for its grace period (`expires_in`), then stops working on its
 * own: the API-key lookup reads `expires_at > now()` beside `revoked_at IS NULL`, still
 * through the unique key_hash index. revoked_at keeps meaning "revoked by an operator".
 */
export class AddApiKeyExpiry1764403600000 implements MigrationInterface {
  name = 'AddApiKeyExpiry1764403600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE api_keys ADD COLUMN expires_at timestamptz`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE api_keys DROP COLUMN expires_at`);
  }
}
