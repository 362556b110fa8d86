import { Injectable } from '@nestjs/common';
import { isIdOf } from '../common/ids';
import { money } from '../domain/money';
import { EventRecorder } from '../notifications/event-recorder.service';
import { OrdersRepository } from '../orders/orders.repository';
import { field, optionalString, refuseUnlessIdOf, WebhookEvent } from '../webhooks/webhook-event';
import { EventOutcome, HandlesWebhookEvents, notReady, WebhookEventHandler } from '../webhooks/webhook-event-handler';
import { refundChange } from './refund';
import { RefundsRepository, SettlingRefund } from './refunds.repository';

/**
 * refund.succeeded / refund.failed settle a pending refund once. A failed refund gives
 * its amount back to the order and recomputes its status. The order is locked before the
 * refund, in the same order as refund creation does, so the two cannot deadlock.
 */
@Injectable()
@HandlesWebhookEvents()
export class RefundEventsHandler implements WebhookEventHandler {
  readonly types = ['refund.succeeded', 'refund.failed'] as const;

  constructor(
    private readonly refunds: RefundsRepository,
    private readonly orders: OrdersRepository,
    private readonly events: EventRecorder,
  ) {}

  merchantOf(event: WebhookEvent): Promise<string | null> {
    const refundId = event.data.refund_id;
    return typeof refundId === 'string' && isIdOf('rf', refundId)
      ? this.refunds.merchantIdOf(refundId)
      : Promise.resolve(null);
  }

  async apply(event: WebhookEvent): Promise<EventOutcome> {
    // Every field is read before anything is looked up, so a malformed event is refused
    // whatever state its refund is in.
    const refundId = field(event, 'refund_id', 'string');
    const failure = { code: optionalString(event, 'failure_code'), message: optionalString(event, 'failure_message') };
    const refund = await this.lockRefund(refundId);
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
      await this.events.record('refund.succeeded', refundChange(await this.refunds.markSucceeded(refund.id)));
      return outcome('processed', null);
    }
    const failed = await this.refunds.markFailed(refund.id, failure.code, failure.message);
    await this.orders.applyRefundDelta(refund.order_id, -money(refund.amount));
    await this.events.record('refund.failed', refundChange(failed));
    return outcome('processed', `refund failed (${failure.code ?? 'unknown'}); its amount is refundable again`);
  }

  /** Locks the refund's order, then the refund, or asks the provider to retry. */
  private async lockRefund(refundId: string): Promise<SettlingRefund> {
    refuseUnlessIdOf('rf', refundId, 'refund_id');
    const orderId = await this.refunds.orderIdOf(refundId);
    if (orderId !== null) await this.orders.lockById(orderId);
    const refund = orderId !== null ? await this.refunds.lockById(refundId) : null;
    if (!refund) throw notReady('Refund', refundId, 'data.refund_id');
    return refund;
  }
}
