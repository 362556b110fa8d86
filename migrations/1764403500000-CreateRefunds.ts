import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateRefunds1764403500000 implements MigrationInterface {
  name = 'CreateRefunds1764403500000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE refunds (
        id              text PRIMARY KEY,
        merchant_id     text NOT NULL REFERENCES merchants (id),
        environment     text NOT NULL CHECK (environment IN ('test', 'live')),
        order_id        text NOT NULL REFERENCES orders (id),
        -- The merchant's refund number: business idempotency, forever. Optional in test,
        -- so NULLs are distinct (such refunds are protected by the Idempotency-Key alone).
        out_refund_no   text,
        amount          bigint NOT NULL CHECK (amount >= 1),
        currency        text NOT NULL,
        status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
        reason          text,
        failure_code    text,
        failure_message text,
        created_at      timestamptz NOT NULL DEFAULT now(),
        succeeded_at    timestamptz,
        failed_at       timestamptz,
        CONSTRAINT refunds_out_refund_no_key UNIQUE (merchant_id, environment, out_refund_no)
      )`);
    await queryRunner.query(`CREATE INDEX refunds_order_idx ON refunds (order_id, created_at DESC, id DESC)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE refunds`);
  }
}
