import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A rolled key stays valid for its grace period (`expires_in`), then stops working on its
 * own. revoked_at keeps meaning "revoked by an operator". What "a key that still
 * authenticates" means is written once, here, as the view active_api_keys: every lookup
 * reads it (PostgreSQL inlines a simple view, so a lookup is still one probe of the unique
 * key_hash index), and no statement can forget one of the two conditions.
 */
export class AddApiKeyExpiry1764403600000 implements MigrationInterface {
  name = 'AddApiKeyExpiry1764403600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE api_keys ADD COLUMN expires_at timestamptz`);
    await queryRunner.query(`
      CREATE VIEW active_api_keys AS
        SELECT * FROM api_keys
         WHERE revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP VIEW active_api_keys`);
    await queryRunner.query(`ALTER TABLE api_keys DROP COLUMN expires_at`);
  }
}
