import type { Environment } from '../domain/environment';
import { money } from '../domain/money';
import type { ChangedObject } from '../notifications/event-recorder.service';
import type { RefundRow, RefundStatus } from './refunds.repository';

export type { RefundStatus };

/** The refund object of the API. */
export interface RefundObject {
  id: string;
  object: 'refund';
  order_id: string;
  out_refund_no: string | null;
  amount: number;
  currency: string;
  status: RefundStatus;
  reason: string | null;
  environment: Environment;
  created_at: string;
  succeeded_at: string | null;
  failed_at: string | null;
}

export function toRefundObject(row: RefundRow): RefundObject {
  return {
    id: row.id,
    object: 'refund',
    order_id: row.order_id,
    out_refund_no: row.out_refund_no,
    amount: money(row.amount),
    currency: row.currency,
    status: row.status,
    reason: row.reason,
    environment: row.environment,
    created_at: row.created_at.toISOString(),
    succeeded_at: row.succeeded_at?.toISOString() ?? null,
    failed_at: row.failed_at?.toISOString() ?? null,
  };
}

/**
 * A refund's settlement, for its event (docs/notifications.md): the object as GET shows it
 * now, sent to the refund's own notify_url if it was created with one, else its order's.
 */
export function refundChange(row: RefundRow & { destination: string | null }): ChangedObject {
  return {
    merchantId: row.merchant_id,
    environment: row.environment,
    orderId: row.order_id,
    refundId: row.id,
    object: toRefundObject(row),
    notifyUrl: row.destination,
  };
}
