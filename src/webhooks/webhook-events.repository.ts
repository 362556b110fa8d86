import { Injectable } from '@nestjs/common';
import { Db, NamedStatement } from '../database/db';
import type { WebhookEvent } from './webhook-event';
import type { EventOutcome } from './webhook-event-handler';

/** Claims the event; no row back means it was received before. */
const CLAIM_EVENT: NamedStatement = {
  name: 'kuko_claim_webhook_event',
  text: `INSERT INTO webhook_events (provider, event_id, type, status, payload)
         VALUES ($1, $2, $3, 'ignored', $4)
         ON CONFLICT ON CONSTRAINT webhook_events_pkey DO NOTHING
         RETURNING 1`,
};

const EVENT_RECEIVED: NamedStatement = {
  name: 'kuko_webhook_event_received',
  text: 'SELECT 1 FROM webhook_events WHERE provider = $1 AND event_id = $2',
};

const RECORD_OUTCOME: NamedStatement = {
  name: 'kuko_record_webhook_outcome',
  text: `UPDATE webhook_events
            SET status = $3, reason = $4, merchant_id = $5, environment = $6, order_id = $7, refund_id = $8
          WHERE provider = $1 AND event_id = $2`,
};

/** The webhook_events table: the unique (provider, event_id) is the deduplication. */
@Injectable()
export class WebhookEventsRepository {
  constructor(private readonly db: Db) {}

  /** true: this transaction recorded the event first; false: it was received before. */
  async claim(provider: string, event: WebhookEvent): Promise<boolean> {
    return (await this.db.one(CLAIM_EVENT, [provider, event.id, event.type, event])) !== null;
  }

  /** Whether the event was received before (its row committed). */
  async received(provider: string, eventId: string): Promise<boolean> {
    return (await this.db.one(EVENT_RECEIVED, [provider, eventId])) !== null;
  }

  async recordOutcome(provider: string, eventId: string, outcome: EventOutcome): Promise<void> {
    await this.db.rows(RECORD_OUTCOME, [
      provider,
      eventId,
      outcome.status,
      outcome.reason,
      outcome.merchantId ?? null,
      outcome.environment ?? null,
      outcome.orderId ?? null,
      outcome.refundId ?? null,
    ]);
  }
}
