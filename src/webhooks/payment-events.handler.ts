import { Injectable, Logger } from '@nestjs/common';
import { newId } from '../common/ids';
import { Db, NamedStatement } from '../database/db';
import { Environment } from '../database/environment';
import { EventRecorder } from '../notifications/event-recorder.service';
import { money, OrderStatus } from '../orders/order';
import { field, optionalString, WebhookEvent } from './webhook-event';
import { EventOutcome, notReady, WebhookEventHandler } from './webhook-event-handler';

const LOCK_ORDER: NamedStatement = {
  name: 'kuko_lock_order_for_payment',
  text: 'SELECT id, merchant_id, environment, status, amount, currency FROM orders WHERE id = $1 FOR UPDATE',
};
const MARK_PAID: NamedStatement = {
  name: 'kuko_mark_order_paid',
  text: `UPDATE orders SET status = 'paid', paid_at = now() WHERE id = $1`,
};
const INSERT_FULFILMENT: NamedStatement = {
  name: 'kuko_insert_fulfilment',
  text: `INSERT INTO fulfillments (id, merchant_id, environment, order_id, provider, event_id, provider_payment_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT ON CONSTRAINT fulfillments_order_id_key DO NOTHING`,
};

interface LockedOrder {
  id: string;
  merchant_id: string;
  environment: Environment;
  status: OrderStatus;
  amount: string;
  currency: string;
}

/**
 * payment.succeeded pays a pending order whose amount and currency match, and creates
 * its one fulfilment (unique order_id: a second event id for the same payment fulfils
 * nothing). State only moves forward: a paid, refunded or closed order is never changed.
 */
@Injectable()
export class PaymentEventsHandler implements WebhookEventHandler {
  readonly types = ['payment.succeeded', 'payment.failed'] as const;
  private readonly logger = new Logger(PaymentEventsHandler.name);

  constructor(
    private readonly db: Db,
    private readonly events: EventRecorder,
  ) {}

  async apply(event: WebhookEvent, provider: string): Promise<EventOutcome> {
    const orderId = field(event, 'order_id', 'string');
    if (event.type === 'payment.succeeded') {
      const amount = field(event, 'amount', 'integer');
      const currency = field(event, 'currency', 'string');
      const paymentId = field(event, 'provider_payment_id', 'string');
      const order = await this.lockOrder(orderId);
      return this.paid(event, provider, order, { amount, currency, paymentId });
    }
    const order = await this.lockOrder(orderId);
    const failure = optionalString(event, 'failure_code') ?? 'unknown';
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
      this.logger.warn(
        { event_id: event.id, order_id: order.id, expected: `${order.amount} ${order.currency}`, got: `${payment.amount} ${payment.currency}` },
        'payment does not match its order; the order is left unpaid',
      );
      return outcome(order, 'rejected', `payment of ${payment.amount} ${payment.currency} does not match the order's ${order.amount} ${order.currency}`);
    }
    await this.db.rows(MARK_PAID, [order.id]);
    await this.db.rows(INSERT_FULFILMENT, [
      newId('ful'),
      order.merchant_id,
      order.environment,
      order.id,
      provider,
      event.id,
      payment.paymentId,
    ]);
    await this.events.orderChanged('order.paid', order.id);
    return outcome(order, 'processed', null);
  }

  /** Locks the order row for the rest of the transaction, or asks the provider to retry. */
  private async lockOrder(orderId: string): Promise<LockedOrder> {
    const order = await this.db.one<LockedOrder>(LOCK_ORDER, [orderId]);
    if (!order) throw notReady('Order', orderId, 'data.order_id');
    return order;
  }
}

function outcome(order: LockedOrder, status: EventOutcome['status'], reason: string | null): EventOutcome {
  return { status, reason, merchantId: order.merchant_id, environment: order.environment, orderId: order.id };
}
