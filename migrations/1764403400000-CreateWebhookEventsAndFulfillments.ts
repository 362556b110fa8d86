import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateWebhookEventsAndFulfillments1764403400000 implements MigrationInterface {
  name = 'CreateWebhookEventsAndFulfillments1764403400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE webhook_events (
        provider    text NOT NULL,
        event_id    text NOT NULL,
        type        text NOT NULL,
        -- What applying the event did: processed, rejected (e.g. amount mismatch), ignored.
        status      text NOT NULL CHECK (status IN ('processed', 'rejected', 'ignored')),
        reason      text,
        -- The order or refund it concerned, once known.
        merchant_id text,
        environment text CHECK (environment IN ('test', 'live')),
        order_id    text,
        refund_id   text,
        payload     jsonb NOT NULL,
        received_at timestamptz NOT NULL DEFAULT now(),
        -- Deduplication: one row per provider event, committed with its effects.
        CONSTRAINT webhook_events_pkey PRIMARY KEY (provider, event_id)
      )`);
    await queryRunner.query(`CREATE INDEX webhook_events_order_idx ON webhook_events (order_id)`);
    await queryRunner.query(`
      CREATE TABLE fulfillments (
        id                  text PRIMARY KEY,
        merchant_id         text NOT NULL,
        environment         text NOT NULL CHECK (environment IN ('test', 'live')),
        -- One fulfilment per order, whatever events arrive.
        order_id            text NOT NULL REFERENCES orders (id) CONSTRAINT fulfillments_order_id_key UNIQUE,
        provider            text NOT NULL,
        event_id            text NOT NULL,
        provider_payment_id text NOT NULL,
        created_at          timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE fulfillments`);
    await queryRunner.query(`DROP TABLE webhook_events`);
  }
}
