import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Merchant notifications (docs/notifications.md): the outbox of events, each delivery
 * attempt, the merchants' signing secrets, the workers' heartbeats (recovery of jobs a
 * killed worker held), and a refund's own notify_url. The job queue's own schema
 * (graphile_worker) is migrated by the library at start-up.
 */
export class CreateNotifications1764403700000 implements MigrationInterface {
  name = 'CreateNotifications1764403700000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE events (
        id               text PRIMARY KEY,
        merchant_id      text NOT NULL REFERENCES merchants (id),
        environment      text NOT NULL CHECK (environment IN ('test', 'live')),
        type             text NOT NULL,
        order_id         text NOT NULL REFERENCES orders (id),
        refund_id        text REFERENCES refunds (id),
        -- json, not jsonb: the object keeps the key order of its GET answer.
        data             json NOT NULL,
        created_at       timestamptz NOT NULL DEFAULT now(),
        notify_url       text,
        delivery_status  text NOT NULL
                         CHECK (delivery_status IN ('pending', 'delivered', 'failed', 'no_destination')),
        -- The schedule slot whose job is due next; a job of another slot is stale.
        next_slot        integer NOT NULL DEFAULT 0,
        attempts         integer NOT NULL DEFAULT 0,
        next_attempt_at  timestamptz,
        last_attempt_at  timestamptz,
        last_status_code integer,
        last_error       text,
        last_duration_ms integer,
        delivered_at     timestamptz,
        -- false until the relay has added the first attempt's job (docs/notifications.md).
        enqueued         boolean NOT NULL DEFAULT false
      )`);
    await queryRunner.query(
      `CREATE INDEX events_list_idx ON events (merchant_id, environment, created_at DESC, id DESC)`,
    );
    await queryRunner.query(
      `CREATE INDEX events_to_enqueue_idx ON events (created_at) WHERE NOT enqueued AND delivery_status = 'pending'`,
    );
    // The backlog that /metrics reports at each scrape: only the pending events are read.
    await queryRunner.query(`CREATE INDEX events_pending_idx ON events (created_at) WHERE delivery_status = 'pending'`);
    await queryRunner.query(`CREATE INDEX events_order_idx ON events (order_id, created_at DESC, id DESC)`);
    await queryRunner.query(`
      CREATE TABLE notification_attempts (
        id            bigserial PRIMARY KEY,
        event_id      text NOT NULL REFERENCES events (id),
        attempted_at  timestamptz NOT NULL,
        url           text NOT NULL,
        kind          text NOT NULL CHECK (kind IN ('scheduled', 'redelivery')),
        status_code   integer,
        error         text,
        duration_ms   integer NOT NULL,
        response_body text
      )`);
    await queryRunner.query(`CREATE INDEX notification_attempts_event_idx ON notification_attempts (event_id, id)`);
    await queryRunner.query(`
      CREATE TABLE notification_secrets (
        id          bigserial PRIMARY KEY,
        merchant_id text NOT NULL REFERENCES merchants (id),
        environment text NOT NULL CHECK (environment IN ('test', 'live')),
        -- whsec_… as it is, or enc:v1:… (AES-256-GCM under ENCRYPTION_KEY).
        secret      text NOT NULL,
        created_at  timestamptz NOT NULL DEFAULT now(),
        -- NULL: the current secret; else it still signs until then (after a roll).
        expires_at  timestamptz
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX notification_secrets_current_key ON notification_secrets (merchant_id, environment)
        WHERE expires_at IS NULL`,
    );
    await queryRunner.query(`
      CREATE TABLE notification_workers (
        worker_id text PRIMARY KEY,
        seen_at   timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`ALTER TABLE refunds ADD COLUMN notify_url text`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE refunds DROP COLUMN notify_url`);
    await queryRunner.query(`DROP TABLE notification_workers`);
    await queryRunner.query(`DROP TABLE notification_secrets`);
    await queryRunner.query(`DROP TABLE notification_attempts`);
    await queryRunner.query(`DROP TABLE events`);
  }
}
