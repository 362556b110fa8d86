import { Injectable, Logger } from '@nestjs/common';
import { money } from '../domain/money';
import { isIdOf, newId } from '../common/ids';
import { EventRecorder } from '../notifications/event-recorder.service';
import { field, optionalString, refuseUnlessIdOf, WebhookEvent } from '../webhooks/webhook-event';
import {
  EventOutcome,
  EventTarget,
  HandlesWebhookEvents,
  notReady,
  WebhookEventHandler,
} from '../webhooks/webhook-event-handler';
import { FulfillmentsRepository } from './fulfillments.repository';
import { orderChange } from './order';
import { LockedOrder, OrdersRepository } from './orders.repository';

/**
 * payment.succeeded pays a pending order whose amount and currency match, and creates
 * its one fulfilment (unique order_id: a second event id for the same payment fulfils
 * nothing). State only moves forward: a paid, refunded or closed order is never changed.
 */
@Injectable()
@HandlesWebhookEvents()
export class PaymentEventsHandler implements WebhookEventHandler {
  readonly types = ['payment.succeeded', 'payment.failed'] as const;
  private readonly logger = new Logger(PaymentEventsHandler.name);

  constructor(
    private readonly orders: OrdersRepository,
    private readonly fulfillments: FulfillmentsRepository,
    private readonly events: EventRecorder,
  ) {}

  /** The order the event names: no read, the id is the target. */
  target(event: WebhookEvent): Promise<EventTarget | null> {
    const orderId = event.data.order_id;
    return Promise.resolve(typeof orderId === 'string' && isIdOf('ord', orderId) ? { orderId } : null);
  }

  async apply(event: WebhookEvent, provider: string): Promise<EventOutcome> {
    const orderId = field(event, 'order_id', 'string');
    if (event.type === 'payment.succeeded') {
      const amount = field(event, 'amount', 'integer');
      const currency = field(event, 'currency', 'string');
      const paymentId = field(event, 'provider_payment_id', 'string');
      const order = await this.lockOrder(orderId);
      return this.paid(event, provider, order, { amount, currency, paymentId });
    }
    const failure = optionalString(event, 'failure_code') ?? 'unknown';
    // Not kept (the order stays payable), but documented as text: checked like the code.
    optionalString(event, 'failure_message');
    const order = await this.lockOrder(orderId);
    return order.status === 'pending'
      ? outcome(order, 'processed', `payment failed (${failure}); the order stays payable`)
      : outcome(order, 'ignored', `order is ${order.status}`);
  }

  private async paid(
    event: WebhookEvent,
    provider: string,
    order: LockedOrder,
    payment: { amount: number; currency: string; paymentId: string },
  ): Promise<EventOutcome> {
    if (order.status !== 'pending') return outcome(order, 'ignored', `order is ${order.status}`);
    if (payment.amount !== money(order.amount) || payment.currency !== order.currency) {
      const expected = `${order.amount} ${order.currency}`;
      const got = `${payment.amount} ${payment.currency}`;
      this.logger.warn({
        msg: 'payment does not match its order; the order is left unpaid',
        event_id: event.id,
        order_id: order.id,
        expected,
        got,
      });
      return outcome(order, 'rejected', `payment of ${got} does not match the order's ${expected}`);
    }
    const paid = await this.orders.markPaid(order.id);
    await this.fulfillments.insertOnce({
      id: newId('ful'),
      merchantId: order.merchant_id,
      environment: order.environment,
      orderId: order.id,
      provider,
      eventId: event.id,
      providerPaymentId: payment.paymentId,
    });
    await this.events.record('order.paid', orderChange(paid));
    return outcome(order, 'processed', null);
  }

  /** Locks the order row for the rest of the transaction, or asks the provider to retry. */
  private async lockOrder(orderId: string): Promise<LockedOrder> {
    refuseUnlessIdOf('ord', orderId, 'order_id');
    const order = await this.orders.lockById(orderId);
    if (!order) throw notReady('Order', orderId, 'data.order_id');
    return order;
  }
}

function outcome(order: LockedOrder, status: EventOutcome['status'], reason: string | null): EventOutcome {
  return { status, reason, merchantId: order.merchant_id, environment: order.environment, orderId: order.id };
}
