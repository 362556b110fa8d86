import { Injectable } from '@nestjs/common';
import { Db } from '../database/db';
import { Environment } from '../database/environment';
import { EventRecorder } from '../notifications/event-recorder.service';
import { field, optionalString, WebhookEvent } from '../webhooks/webhook-event';
import { EventOutcome, notReady, WebhookEventHandler } from '../webhooks/webhook-event-handler';
import { RefundStatus } from './refund';

interface SettlingRefund {
  id: string;
  order_id: string;
  merchant_id: string;
  environment: Environment;
  status: RefundStatus;
  amount: string;
}

/**
 * refund.succeeded / refund.failed settle a pending refund once. A failed refund gives
 * its amount back to the order and recomputes its status. The order is locked before the
 * refund, in the same order as refund creation does, so the two cannot deadlock.
 */
@Injectable()
export class RefundEventsHandler implements WebhookEventHandler {
  readonly types = ['refund.succeeded', 'refund.failed'] as const;

  constructor(
    private readonly db: Db,
    private readonly events: EventRecorder,
  ) {}

  async apply(event: WebhookEvent): Promise<EventOutcome> {
    const refund = await this.lockRefund(field(event, 'refund_id', 'string'));
    const outcome = (status: EventOutcome['status'], reason: string | null): EventOutcome => ({
      status,
      reason,
      merchantId: refund.merchant_id,
      environment: refund.environment,
      orderId: refund.order_id,
      refundId: refund.id,
    });
    if (refund.status !== 'pending') return outcome('ignored', `refund is already ${refund.status}`);

    if (event.type === 'refund.succeeded') {
      await this.db.rows(`UPDATE refunds SET status = 'succeeded', succeeded_at = now() WHERE id = $1`, [refund.id]);
      await this.events.refundSettled('refund.succeeded', refund.id);
      return outcome('processed', null);
    }
    const code = optionalString(event, 'failure_code');
    await this.db.rows(
      `UPDATE refunds SET status = 'failed', failed_at = now(), failure_code = $2, failure_message = $3 WHERE id = $1`,
      [refund.id, code, optionalString(event, 'failure_message')],
    );
    await this.db.rows(
      `UPDATE orders
          SET amount_refunded = amount_refunded - $2,
              status = CASE WHEN amount_refunded - $2 = 0 THEN 'paid' ELSE 'partially_refunded' END
        WHERE id = $1`,
      [refund.order_id, refund.amount],
    );
    await this.events.refundSettled('refund.failed', refund.id);
    return outcome('processed', `refund failed (${code ?? 'unknown'}); its amount is refundable again`);
  }

  private async lockRefund(refundId: string): Promise<SettlingRefund> {
    const found = await this.db.one<{ order_id: string }>('SELECT order_id FROM refunds WHERE id = $1', [refundId]);
    if (found) await this.db.rows('SELECT 1 FROM orders WHERE id = $1 FOR UPDATE', [found.order_id]);
    const refund = found
      ? await this.db.one<SettlingRefund>(
          'SELECT id, order_id, merchant_id, environment, status, amount FROM refunds WHERE id = $1 FOR UPDATE',
          [refundId],
        )
      : null;
    if (!refund) throw notReady('Refund', refundId, 'data.refund_id');
    return refund;
  }
}
