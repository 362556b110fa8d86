import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateMerchants1764403200000 implements MigrationInterface {
  name = 'CreateMerchants1764403200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE merchants (
        id         text PRIMARY KEY,
        name       text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`
      CREATE TABLE api_keys (
        id          text PRIMARY KEY,
        merchant_id text NOT NULL REFERENCES merchants (id),
        environment text NOT NULL CHECK (environment IN ('test', 'live')),
        -- SHA-256 of the whole key; the key itself is shown once and never stored.
        key_hash    bytea NOT NULL UNIQUE,
        -- The first characters, so an operator can tell keys apart.
        key_prefix  text NOT NULL,
        created_at  timestamptz NOT NULL DEFAULT now(),
        revoked_at  timestamptz
      )`);
    await queryRunner.query(`CREATE INDEX api_keys_merchant_idx ON api_keys (merchant_id)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE api_keys`);
    await queryRunner.query(`DROP TABLE merchants`);
  }
}
