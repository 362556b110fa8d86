import { Injectable } from '@nestjs/common';
import { isIdOf } from '../common/ids';
import { money } from '../domain/money';
import { EventRecorder } from '../notifications/event-recorder.service';
import { OrdersRepository } from '../orders/orders.repository';
import { field, optionalString, refuseUnlessIdOf, WebhookEvent } from '../webhooks/webhook-event';
import {
  EventOutcome,
  EventTarget,
  HandlesWebhookEvents,
  notReady,
  WebhookEventHandler,
} from '../webhooks/webhook-event-handler';
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

  /** The refund's order, read before the transaction, which locks it first. */
  async target(event: WebhookEvent): Promise<EventTarget | null> {
    const refundId = event.data.refund_id;
    if (typeof refundId !== 'string' || !isIdOf('rf', refundId)) return null;
    const orderId = await this.refunds.orderIdOf(refundId);
    return orderId === null ? null : { orderId };
  }

  async apply(event: WebhookEvent, _provider: string, target: EventTarget | null): Promise<EventOutcome> {
    // Every field is read before anything is looked up, so a malformed event is refused
    // whatever state its refund is in.
    const refundId = field(event, 'refund_id', 'string');
    const failure = { code: optionalString(event, 'failure_code'), message: optionalString(event, 'failure_message') };
    const refund = await this.lockRefund(refundId, target);
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

  /**
   * Locks the refund's order (the target read before the transaction), then the refund,
   * or asks the provider to retry: a refund not found then may not have committed yet.
   */
  private async lockRefund(refundId: string, target: EventTarget | null): Promise<SettlingRefund> {
    refuseUnlessIdOf('rf', refundId, 'refund_id');
    if (target) await this.orders.lockById(target.orderId);
    const refund = target ? await this.refunds.lockById(refundId) : null;
    if (!refund) throw notReady('Refund', refundId, 'data.refund_id');
    return refund;
  }
}
