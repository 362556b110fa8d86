/**
 * The webhook receiver (SPEC §8): exactly-once application of provider events.
 *
 * One transaction records the event (INSERT … ON CONFLICT (provider, event_id) DO NOTHING)
 * and applies it. A second delivery of the same event, sequential or concurrent, finds
 * the row (or waits for the first to commit) and changes nothing. If applying fails,
 * or the order is not there yet, the transaction rolls back, event row included, so the
 * provider's retry applies it later. Nothing here lives in process memory.
 */
import { Inject, Injectable } from '@nestjs/common';
import { Db, NamedStatement } from '../database/db';
import type { Environment } from '../database/environment';
import { applyWithinEnvironments } from './environment-scope';
import { WebhookEvent } from './webhook-event';
import { EventOutcome, WEBHOOK_EVENT_HANDLERS, WebhookEventHandler } from './webhook-event-handler';

/** Claims the event; no row back means it was received before. */
const CLAIM_EVENT: NamedStatement = {
  name: 'kuko_claim_webhook_event',
  text: `INSERT INTO webhook_events (provider, event_id, type, status, payload)
         VALUES ($1, $2, $3, 'ignored', $4)
         ON CONFLICT ON CONSTRAINT webhook_events_pkey DO NOTHING
         RETURNING 1`,
};

const RECORD_OUTCOME: NamedStatement = {
  name: 'kuko_record_webhook_outcome',
  text: `UPDATE webhook_events
            SET status = $3, reason = $4, merchant_id = $5, environment = $6, order_id = $7, refund_id = $8
          WHERE provider = $1 AND event_id = $2`,
};

export type ReceiveResult = { duplicate: true } | { duplicate: false; outcome: EventOutcome };

@Injectable()
export class WebhookReceiver {
  private readonly handlers = new Map<string, WebhookEventHandler>();

  constructor(
    private readonly db: Db,
    @Inject(WEBHOOK_EVENT_HANDLERS) handlers: WebhookEventHandler[],
  ) {
    for (const handler of handlers) for (const type of handler.types) this.handlers.set(type, handler);
  }

  /** `environments`: those of the secrets that signed the event; it may touch no other. */
  receive(provider: string, event: WebhookEvent, environments: ReadonlySet<Environment>): Promise<ReceiveResult> {
    return this.db.transaction(async () => {
      const claimed = await this.db.one(CLAIM_EVENT, [provider, event.id, event.type, event]);
      if (!claimed) return { duplicate: true };
      const handler = this.handlers.get(event.type);
      const outcome: EventOutcome = handler
        ? await applyWithinEnvironments(this.db, environments, () => handler.apply(event, provider))
        : { status: 'ignored', reason: `unknown event type ${event.type}` };
      await this.db.rows(RECORD_OUTCOME, [
          provider,
          event.id,
          outcome.status,
          outcome.reason,
          outcome.merchantId ?? null,
          outcome.environment ?? null,
          outcome.orderId ?? null,
          outcome.refundId ?? null,
        ],
      );
      return { duplicate: false, outcome };
    });
  }
}
