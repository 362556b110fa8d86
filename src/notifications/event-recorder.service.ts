/**
 * Records the events of state changes inside the business transaction that makes them
 * (a transactional outbox, docs/notifications.md). The object is re-read after the change
 * and mapped exactly as its GET maps it, so the notification shows what GET showed then.
 */
import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { Db, NamedStatement } from '../database/db';
import { ORDER_COLUMNS, OrderRow, toOrderObject } from '../orders/order';
import { REFUND_COLUMNS, RefundRow, toRefundObject } from '../refunds/refund';
import { EventType, newEventId } from './event';
import { EventsRepository } from './events.repository';

const ORDER_NOW: NamedStatement = {
  name: 'kuko_event_order_object',
  text: `SELECT ${ORDER_COLUMNS} FROM orders WHERE id = $1`,
};
/** A refund's events go to its own notify_url, else its order's. */
const REFUND_NOW: NamedStatement = {
  name: 'kuko_event_refund_object',
  text: `SELECT ${REFUND_COLUMNS},
                coalesce(notify_url, (SELECT o.notify_url FROM orders o WHERE o.id = refunds.order_id)) AS destination
           FROM refunds WHERE id = $1`,
};

@Injectable()
export class EventRecorder {
  constructor(
    private readonly db: Db,
    private readonly events: EventsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async orderChanged(type: 'order.paid' | 'order.closed', orderId: string): Promise<void> {
    const row = await this.db.one<OrderRow>(ORDER_NOW, [orderId]);
    if (!row) throw new Error(`order ${orderId} vanished inside its own transaction`);
    await this.record(type, row.merchant_id, row.environment, row.id, null, toOrderObject(row), row.notify_url);
  }

  async refundSettled(type: 'refund.succeeded' | 'refund.failed', refundId: string): Promise<void> {
    const row = await this.db.one<RefundRow & { destination: string | null }>(REFUND_NOW, [refundId]);
    if (!row) throw new Error(`refund ${refundId} vanished inside its own transaction`);
    const { merchant_id: merchantId, environment, order_id: orderId } = row;
    await this.record(type, merchantId, environment, orderId, row.id, toRefundObject(row), row.destination);
  }

  private record(
    type: EventType,
    merchantId: string,
    environment: OrderRow['environment'],
    orderId: string,
    refundId: string | null,
    object: unknown,
    notifyUrl: string | null,
  ): Promise<void> {
    return this.events.record({
      id: newEventId(),
      merchantId,
      environment,
      type,
      orderId,
      refundId,
      object,
      notifyUrl,
      firstDelayMs: this.config.notifications.retrySchedule[0] ?? 0,
    });
  }
}
