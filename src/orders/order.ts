import type { Environment } from '../domain/environment';
import { money } from '../domain/money';
import type { ChangedObject } from '../notifications/event-recorder.service';
import type { OrderRow, OrderStatus } from './orders.repository';

export type { OrderStatus };

/** The order object of the API. */
export interface OrderObject {
  id: string;
  object: 'order';
  out_trade_no: string;
  amount: number;
  currency: string;
  subject: string;
  description: string | null;
  status: OrderStatus;
  amount_refunded: number;
  environment: Environment;
  metadata: Record<string, string>;
  notify_url: string | null;
  return_url: string | null;
  created_at: string;
  paid_at: string | null;
  closed_at: string | null;
}

export function toOrderObject(row: OrderRow): OrderObject {
  return {
    id: row.id,
    object: 'order',
    out_trade_no: row.out_trade_no,
    amount: money(row.amount),
    currency: row.currency,
    subject: row.subject,
    description: row.description,
    status: row.status,
    amount_refunded: money(row.amount_refunded),
    environment: row.environment,
    metadata: row.metadata,
    notify_url: row.notify_url,
    return_url: row.return_url,
    created_at: row.created_at.toISOString(),
    paid_at: row.paid_at?.toISOString() ?? null,
    closed_at: row.closed_at?.toISOString() ?? null,
  };
}

/** An order's state change, for its event (docs/notifications.md): the object as GET shows it now. */
export function orderChange(row: OrderRow): ChangedObject {
  return {
    merchantId: row.merchant_id,
    environment: row.environment,
    orderId: row.id,
    refundId: null,
    object: toOrderObject(row),
    notifyUrl: row.notify_url,
  };
}
