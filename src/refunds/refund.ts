import { Environment } from '../database/environment';
import { money } from '../orders/order';

export type RefundStatus = 'pending' | 'succeeded' | 'failed';

export interface RefundRow {
  id: string;
  merchant_id: string;
  environment: Environment;
  order_id: string;
  out_refund_no: string | null;
  amount: string; // bigint
  currency: string;
  status: RefundStatus;
  reason: string | null;
  created_at: Date;
  succeeded_at: Date | null;
  failed_at: Date | null;
}

export const REFUND_COLUMNS = `id, merchant_id, environment, order_id, out_refund_no, amount, currency, status, reason,
  created_at, succeeded_at, failed_at`;

/** The refund object of the API (SPEC §6). */
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
