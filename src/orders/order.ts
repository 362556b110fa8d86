import { Environment } from '../database/environment';

export type OrderStatus = 'pending' | 'paid' | 'partially_refunded' | 'refunded' | 'closed';

/** An orders row as selected by ORDER_COLUMNS. */
export interface OrderRow {
  id: string;
  merchant_id: string;
  environment: Environment;
  out_trade_no: string;
  amount: string; // bigint
  currency: string;
  subject: string;
  description: string | null;
  status: OrderStatus;
  amount_refunded: string; // bigint
  metadata: Record<string, string>;
  notify_url: string | null;
  return_url: string | null;
  created_at: Date;
  paid_at: Date | null;
  closed_at: Date | null;
}

export const ORDER_COLUMNS = `id, merchant_id, environment, out_trade_no, amount, currency, subject, description,
  status, amount_refunded, metadata, notify_url, return_url, created_at, paid_at, closed_at`;

/** The order object of the API (SPEC §5). */
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

/** bigint minor units to a JSON number; the schema bounds amounts far below 2^53. */
export function money(value: string): number {
  const amount = Number(value);
  if (!Number.isSafeInteger(amount)) throw new Error(`amount ${value} is out of the safe integer range`);
  return amount;
}
