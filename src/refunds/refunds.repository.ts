import { Injectable } from '@nestjs/common';
import type { Environment } from '../domain/environment';
import { refundNumberLockArgs } from '../database/advisory-locks';
import { Db } from '../database/db';
import { keysetRows, KeysetRows } from '../database/keyset-page';
import type { OrderScope } from '../orders/orders.repository';

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

export interface NewRefund {
  id: string;
  orderId: string;
  outRefundNo: string | null;
  amount: number;
  currency: string;
  reason: string | null;
  /** Where this refund's events go instead of its order's notify_url. */
  notifyUrl: string | null;
}

/** What settling a refund needs of it, once locked. */
export interface SettlingRefund {
  id: string;
  order_id: string;
  merchant_id: string;
  environment: Environment;
  status: RefundStatus;
  amount: string; // bigint
}

const REFUND_COLUMNS = `id, merchant_id, environment, order_id, out_refund_no, amount, currency, status, reason,
  created_at, succeeded_at, failed_at`;

/** A settled refund as its GET shows it, and where its events go: its own notify_url, else its order's. */
const SETTLED_RETURNING = `RETURNING ${REFUND_COLUMNS},
  coalesce(notify_url, (SELECT o.notify_url FROM orders o WHERE o.id = refunds.order_id)) AS destination`;

export type SettledRefund = RefundRow & { destination: string | null };

/** The refunds table. */
@Injectable()
export class RefundsRepository {
  constructor(private readonly db: Db) {}

  /**
   * Waits for any other transaction creating a refund under this out_refund_no to end, so
   * that what it committed is seen before this one reads its order (RefundsService.create).
   * A statement of its own: a read joined to it would keep the snapshot taken before the
   * wait, and miss what the other transaction committed.
   */
  async lockOutRefundNo(scope: OrderScope, outRefundNo: string): Promise<void> {
    await this.db.rows(`SELECT pg_advisory_xact_lock(${refundNumberLockArgs('$1', '$2', '$3')})`, [
      scope.merchantId,
      scope.environment,
      outRefundNo,
    ]);
  }

  /** The new refund, or null when (merchant, environment, out_refund_no) was taken. */
  insertIfAbsent(scope: OrderScope, refund: NewRefund): Promise<RefundRow | null> {
    return this.db.one<RefundRow>(
      `INSERT INTO refunds (id, merchant_id, environment, order_id, out_refund_no, amount, currency, reason, notify_url)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT ON CONSTRAINT refunds_out_refund_no_key DO NOTHING
       RETURNING ${REFUND_COLUMNS}`,
      [
        refund.id,
        scope.merchantId,
        scope.environment,
        refund.orderId,
        refund.outRefundNo,
        refund.amount,
        refund.currency,
        refund.reason,
        refund.notifyUrl,
      ],
    );
  }

  findById(scope: OrderScope, id: string): Promise<RefundRow | null> {
    return this.db.one<RefundRow>(
      `SELECT ${REFUND_COLUMNS} FROM refunds WHERE id = $1 AND merchant_id = $2 AND environment = $3`,
      [id, scope.merchantId, scope.environment],
    );
  }

  findByOutRefundNo(scope: OrderScope, outRefundNo: string): Promise<RefundRow | null> {
    return this.db.one<RefundRow>(
      `SELECT ${REFUND_COLUMNS} FROM refunds WHERE merchant_id = $1 AND environment = $2 AND out_refund_no = $3`,
      [scope.merchantId, scope.environment, outRefundNo],
    );
  }

  /** An order's refunds, newest first; null when the cursor is not one of them. */
  listPageForOrder(
    scope: OrderScope,
    orderId: string,
    limit: number,
    startingAfter?: string,
  ): Promise<KeysetRows<RefundRow> | null> {
    return keysetRows<RefundRow>(this.db, {
      table: 'refunds',
      columns: REFUND_COLUMNS,
      where: 'order_id = $1 AND merchant_id = $2 AND environment = $3',
      params: [orderId, scope.merchantId, scope.environment],
      limit,
      startingAfter,
    });
  }

  /** The order a refund belongs to, read without a lock (it never changes; the order is locked first). */
  async orderIdOf(refundId: string): Promise<string | null> {
    const row = await this.db.one<{ order_id: string }>('SELECT order_id FROM refunds WHERE id = $1', [refundId]);
    return row?.order_id ?? null;
  }

  /** Locks a refund named by the provider (by id alone) for the rest of the transaction. */
  lockById(refundId: string): Promise<SettlingRefund | null> {
    return this.db.lockOne<SettlingRefund>(
      'SELECT id, order_id, merchant_id, environment, status, amount FROM refunds WHERE id = $1 FOR UPDATE',
      [refundId],
    );
  }

  async markSucceeded(refundId: string): Promise<SettledRefund> {
    const row = await this.db.one<SettledRefund>(
      `UPDATE refunds SET status = 'succeeded', succeeded_at = now() WHERE id = $1 ${SETTLED_RETURNING}`,
      [refundId],
    );
    return row!;
  }

  async markFailed(refundId: string, code: string | null, message: string | null): Promise<SettledRefund> {
    const row = await this.db.one<SettledRefund>(
      `UPDATE refunds SET status = 'failed', failed_at = now(), failure_code = $2, failure_message = $3
        WHERE id = $1 ${SETTLED_RETURNING}`,
      [refundId, code, message],
    );
    return row!;
  }
}
