import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateOrdersAndIdempotencyKeys1764403300000 implements MigrationInterface {
  name = 'CreateOrdersAndIdempotencyKeys1764403300000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE orders (
        id              text PRIMARY KEY,
        merchant_id     text NOT NULL REFERENCES merchants (id),
        environment     text NOT NULL CHECK (environment IN ('test', 'live')),
        out_trade_no    text NOT NULL,
        amount          bigint NOT NULL CHECK (amount BETWEEN 1 AND 100000000000),
        currency        text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
        subject         text NOT NULL,
        description     text,
        status          text NOT NULL DEFAULT 'pending'
                        CHECK (status IN ('pending', 'paid', 'partially_refunded', 'refunded', 'closed')),
        amount_refunded bigint NOT NULL DEFAULT 0 CHECK (amount_refunded BETWEEN 0 AND amount),
        metadata        jsonb NOT NULL DEFAULT '{}',
        notify_url      text,
        return_url      text,
        created_at      timestamptz NOT NULL DEFAULT now(),
        paid_at         timestamptz,
        closed_at       timestamptz,
        -- Business idempotency: one order per out_trade_no, per merchant and environment, forever.
        CONSTRAINT orders_out_trade_no_key UNIQUE (merchant_id, environment, out_trade_no)
      )`);
    // Newest first, per merchant and environment (cursor pagination).
    await queryRunner.query(
      `CREATE INDEX orders_list_idx ON orders (merchant_id, environment, created_at DESC, id DESC)`,
    );
    await queryRunner.query(`
      CREATE TABLE idempotency_keys (
        merchant_id      text NOT NULL,
        environment      text NOT NULL CHECK (environment IN ('test', 'live')),
        key              text NOT NULL,
        -- The endpoint and body the key was first used with.
        method           text NOT NULL,
        path             text NOT NULL,
        fingerprint      bytea NOT NULL,
        -- The first answer, replayed byte for byte.
        response_status  smallint NOT NULL,
        response_body    text NOT NULL,
        response_headers jsonb NOT NULL DEFAULT '{}',
        request_id       text NOT NULL,
        created_at       timestamptz NOT NULL DEFAULT now(),
        expires_at       timestamptz NOT NULL,
        PRIMARY KEY (merchant_id, environment, key)
      )`);
    await queryRunner.query(`CREATE INDEX idempotency_keys_expires_idx ON idempotency_keys (expires_at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE idempotency_keys`);
    await queryRunner.query(`DROP TABLE orders`);
  }
}
