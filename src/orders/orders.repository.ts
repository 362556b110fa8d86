import { Injectable } from '@nestjs/common';
import type { Environment } from '../domain/environment';
import { Db, NamedStatement } from '../database/db';
import { keysetRows, KeysetRows } from '../database/keyset-page';

export type OrderStatus = 'pending' | 'paid' | 'partially_refunded' | 'refunded' | 'closed';

/** Whose orders a statement may see: every lookup but the provider's is scoped to both. */
export interface OrderScope {
  merchantId: string;
  environment: Environment;
}

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

export interface NewOrder {
  id: string;
  outTradeNo: string;
  amount: number;
  currency: string;
  subject: string;
  description: string | null;
  metadata: Record<string, string>;
  notifyUrl: string | null;
  returnUrl: string | null;
}

/** What a payment or a refund needs of an order it has locked. */
export interface LockedOrder {
  id: string;
  merchant_id: string;
  environment: Environment;
  status: OrderStatus;
  amount: string; // bigint
  amount_refunded: string; // bigint
  currency: string;
}

const ORDER_COLUMNS = `id, merchant_id, environment, out_trade_no, amount, currency, subject, description,
  status, amount_refunded, metadata, notify_url, return_url, created_at, paid_at, closed_at`;
const LOCKED_COLUMNS = 'id, merchant_id, environment, status, amount, amount_refunded, currency';

/** Claims out_trade_no; no row back means the order exists already. (Exported for the bench's SQL scenarios.) */
export const INSERT_ORDER: NamedStatement = {
  name: 'kuko_insert_order',
  text: `INSERT INTO orders (id, merchant_id, environment, out_trade_no, amount, currency, subject, description,
                            metadata, notify_url, return_url)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
         ON CONFLICT ON CONSTRAINT orders_out_trade_no_key DO NOTHING
         RETURNING ${ORDER_COLUMNS}`,
};
const LOCK_BY_ID: NamedStatement = {
  name: 'kuko_lock_order_for_payment',
  text: `SELECT ${LOCKED_COLUMNS} FROM orders WHERE id = $1 FOR UPDATE`,
};
const MARK_PAID: NamedStatement = {
  name: 'kuko_mark_order_paid',
  text: `UPDATE orders SET status = 'paid', paid_at = now() WHERE id = $1 RETURNING ${ORDER_COLUMNS}`,
};

/** The orders table. */
@Injectable()
export class OrdersRepository {
  constructor(private readonly db: Db) {}

  /** The new order, or null when (merchant, environment, out_trade_no) was taken. */
  insertIfAbsent(scope: OrderScope, order: NewOrder): Promise<OrderRow | null> {
    return this.db.one<OrderRow>(INSERT_ORDER, [
      order.id,
      scope.merchantId,
      scope.environment,
      order.outTradeNo,
      order.amount,
      order.currency,
      order.subject,
      order.description,
      order.metadata,
      order.notifyUrl,
      order.returnUrl,
    ]);
  }

  findById(scope: OrderScope, id: string): Promise<OrderRow | null> {
    return this.db.one<OrderRow>(
      `SELECT ${ORDER_COLUMNS} FROM orders WHERE id = $1 AND merchant_id = $2 AND environment = $3`,
      [id, scope.merchantId, scope.environment],
    );
  }

  findByOutTradeNo(scope: OrderScope, outTradeNo: string): Promise<OrderRow | null> {
    return this.db.one<OrderRow>(
      `SELECT ${ORDER_COLUMNS} FROM orders WHERE merchant_id = $1 AND environment = $2 AND out_trade_no = $3`,
      [scope.merchantId, scope.environment, outTradeNo],
    );
  }

  async exists(scope: OrderScope, id: string): Promise<boolean> {
    const row = await this.db.one('SELECT 1 FROM orders WHERE id = $1 AND merchant_id = $2 AND environment = $3', [
      id,
      scope.merchantId,
      scope.environment,
    ]);
    return row !== null;
  }

  /** Newest first; null when the cursor is not one of this scope's orders. */
  listPage(scope: OrderScope, limit: number, startingAfter?: string): Promise<KeysetRows<OrderRow> | null> {
    return keysetRows<OrderRow>(this.db, {
      table: 'orders',
      columns: ORDER_COLUMNS,
      where: 'merchant_id = $1 AND environment = $2',
      params: [scope.merchantId, scope.environment],
      limit,
      startingAfter,
    });
  }

  /** pending → closed; null when the order is not pending (or not there). */
  closeIfPending(scope: OrderScope, id: string): Promise<OrderRow | null> {
    return this.db.one<OrderRow>(
      `UPDATE orders SET status = 'closed', closed_at = now()
        WHERE id = $1 AND merchant_id = $2 AND environment = $3 AND status = 'pending'
        RETURNING ${ORDER_COLUMNS}`,
      [id, scope.merchantId, scope.environment],
    );
  }

  /** Locks an order named by the provider (by id alone) for the rest of the transaction. */
  lockById(id: string): Promise<LockedOrder | null> {
    return this.db.lockOne<LockedOrder>(LOCK_BY_ID, [id]);
  }

  /** Locks one of the scope's orders, named by id or by out_trade_no. */
  lockInScope(scope: OrderScope, by: 'id' | 'out_trade_no', value: string): Promise<LockedOrder | null> {
    const column = by === 'id' ? 'id' : 'out_trade_no';
    return this.db.lockOne<LockedOrder>(
      `SELECT ${LOCKED_COLUMNS} FROM orders WHERE ${column} = $1 AND merchant_id = $2 AND environment = $3 FOR UPDATE`,
      [value, scope.merchantId, scope.environment],
    );
  }

  /** The paid order, as its GET now shows it (for its event). */
  async markPaid(id: string): Promise<OrderRow> {
    return (await this.db.one<OrderRow>(MARK_PAID, [id]))!;
  }

  /**
   * Adds a refund's amount to the order (a negative delta gives a failed refund's amount
   * back) and derives the status from what is refunded: the one place that rule lives.
   * The CHECK on amount_refunded (0 … amount) backs up the callers' arithmetic.
   */
  async applyRefundDelta(id: string, delta: number): Promise<void> {
    await this.db.rows(
      `UPDATE orders
          SET amount_refunded = amount_refunded + $2,
              status = CASE WHEN amount_refunded + $2 = 0 THEN 'paid'
                            WHEN amount_refunded + $2 = amount THEN 'refunded'
                            ELSE 'partially_refunded' END
        WHERE id = $1`,
      [id, delta],
    );
  }
}
