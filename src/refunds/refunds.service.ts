import { Injectable } from '@nestjs/common';
import { RequestAuth } from '../common/auth/request-auth';
import { DomainError, notFound } from '../common/errors/domain-error';
import { Page } from '../common/http/api-response';
import { newId } from '../common/ids';
import { keysetPage, PageQuery } from '../common/pagination';
import { Db } from '../database/db';
import { NotifyUrlPolicy } from '../notifications/notify-url.policy';
import { money, OrderStatus } from '../orders/order';
import { CreateRefundDto } from './dto/create-refund.dto';
import { REFUND_COLUMNS, RefundObject, RefundRow, toRefundObject } from './refund';

export interface CreatedRefund {
  refund: RefundObject;
  /** false: a refund with this out_refund_no already existed and is returned as it is. */
  created: boolean;
}

interface LockedOrder {
  id: string;
  status: OrderStatus;
  amount: string;
  amount_refunded: string;
  currency: string;
}

/**
 * Partial refunds. The order row is locked (FOR UPDATE) before its refundable amount is
 * read, so concurrent refunds of one order queue on that lock and their sum can never
 * exceed the order amount; a CHECK on orders.amount_refunded backs this up.
 */
@Injectable()
export class RefundsService {
  constructor(
    private readonly db: Db,
    private readonly notifyUrls: NotifyUrlPolicy,
  ) {}

  async create(auth: RequestAuth, dto: CreateRefundDto): Promise<CreatedRefund> {
    checkOrderReference(dto);
    this.notifyUrls.check(auth, dto.notify_url);
    if (auth.environment === 'live' && dto.out_refund_no === undefined) {
      throw new DomainError('parameter_missing', 'out_refund_no is required for live refunds.', 'out_refund_no');
    }
    const repeat = () => (dto.out_refund_no === undefined ? null : this.findByOutRefundNo(auth, dto.out_refund_no));
    const existing = await repeat();
    if (existing) return { refund: existing, created: false };

    const order = await this.lockOrder(auth, dto);
    // A concurrent request with this out_refund_no may have refunded the order while we
    // waited for its lock: its refund is the answer, not a refusal for the amount left.
    const committedMeanwhile = await repeat();
    if (committedMeanwhile) return { refund: committedMeanwhile, created: false };
    if (order.status !== 'paid' && order.status !== 'partially_refunded') {
      throw new DomainError('order_not_paid', `Only a paid order can be refunded; order ${order.id} is ${order.status}.`, dto.order_id ? 'order_id' : 'out_trade_no');
    }
    const refundable = money(order.amount) - money(order.amount_refunded);
    const amount = dto.amount ?? refundable;
    if (amount > refundable) {
      throw new DomainError(
        'refund_amount_exceeded',
        `The refund of ${amount} exceeds the ${refundable} ${order.currency} still refundable on order ${order.id}.`,
        'amount',
      );
    }

    const inserted = await this.db.one<RefundRow>(
      `INSERT INTO refunds (id, merchant_id, environment, order_id, out_refund_no, amount, currency, reason)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT ON CONSTRAINT refunds_out_refund_no_key DO NOTHING
       RETURNING ${REFUND_COLUMNS}`,
      [newId('rf'), auth.merchantId, auth.environment, order.id, dto.out_refund_no ?? null, amount, order.currency, dto.reason ?? null],
    );
    if (!inserted) {
      // A concurrent request with this out_refund_no (for another order) won the race.
      const winner = await this.findByOutRefundNo(auth, dto.out_refund_no!);
      if (!winner) throw new Error(`refund ${dto.out_refund_no} conflicted but cannot be read`);
      return { refund: winner, created: false };
    }
    await this.db.rows(
      `UPDATE orders
          SET amount_refunded = amount_refunded + $2,
              status = CASE WHEN amount_refunded + $2 = amount THEN 'refunded' ELSE 'partially_refunded' END
        WHERE id = $1`,
      [order.id, amount],
    );
    await this.notifyUrls.attachToRefund(inserted.id, dto.notify_url);
    return { refund: toRefundObject(inserted), created: true };
  }

  async getById(auth: RequestAuth, id: string): Promise<RefundObject> {
    const row = await this.db.one<RefundRow>(
      `SELECT ${REFUND_COLUMNS} FROM refunds WHERE id = $1 AND merchant_id = $2 AND environment = $3`,
      [id, auth.merchantId, auth.environment],
    );
    if (!row) throw notFound('refund', id);
    return toRefundObject(row);
  }

  async getByOutRefundNo(auth: RequestAuth, outRefundNo: string): Promise<RefundObject> {
    const refund = await this.findByOutRefundNo(auth, outRefundNo);
    if (!refund) throw notFound('refund with out_refund_no', outRefundNo, 'out_refund_no');
    return refund;
  }

  /** The refunds of one order, newest first. */
  async listForOrder(auth: RequestAuth, orderId: string, page: PageQuery): Promise<Page<RefundObject>> {
    const order = await this.db.one(
      'SELECT 1 FROM orders WHERE id = $1 AND merchant_id = $2 AND environment = $3',
      [orderId, auth.merchantId, auth.environment],
    );
    if (!order) throw notFound('order', orderId);
    return keysetPage(this.db, {
      table: 'refunds',
      columns: REFUND_COLUMNS,
      where: 'order_id = $1 AND merchant_id = $2 AND environment = $3',
      params: [orderId, auth.merchantId, auth.environment],
      page,
      object: 'refund',
      map: toRefundObject,
    });
  }

  private async findByOutRefundNo(auth: RequestAuth, outRefundNo: string): Promise<RefundObject | null> {
    const row = await this.db.one<RefundRow>(
      `SELECT ${REFUND_COLUMNS} FROM refunds WHERE merchant_id = $1 AND environment = $2 AND out_refund_no = $3`,
      [auth.merchantId, auth.environment, outRefundNo],
    );
    return row ? toRefundObject(row) : null;
  }

  private async lockOrder(auth: RequestAuth, dto: CreateRefundDto): Promise<LockedOrder> {
    const [column, value, param] = dto.order_id
      ? ['id', dto.order_id, 'order_id']
      : ['out_trade_no', dto.out_trade_no!, 'out_trade_no'];
    const order = await this.db.one<LockedOrder>(
      `SELECT id, status, amount, amount_refunded, currency FROM orders
        WHERE ${column} = $1 AND merchant_id = $2 AND environment = $3
        FOR UPDATE`,
      [value, auth.merchantId, auth.environment],
    );
    if (!order) throw notFound('order', value, param);
    return order;
  }
}

function checkOrderReference(dto: CreateRefundDto): void {
  if (dto.order_id === undefined && dto.out_trade_no === undefined) {
    throw new DomainError('parameter_missing', 'Name the order to refund with order_id or out_trade_no.', 'order_id');
  }
  if (dto.order_id !== undefined && dto.out_trade_no !== undefined) {
    throw new DomainError('parameter_invalid', 'Send either order_id or out_trade_no, not both.', 'out_trade_no');
  }
}
