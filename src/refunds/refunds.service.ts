import { Injectable } from '@nestjs/common';
import { RequestAuth } from '../common/auth/request-auth';
import { Db } from '../database/db';
import { money } from '../domain/money';
import { DomainError, notFound } from '../common/errors/domain-error';
import { Page } from '../common/http/api-response';
import { newId } from '../common/ids';
import { DEFAULT_PAGE_LIMIT, PageQuery, toPage } from '../common/pagination';
import { NotifyUrlPolicy } from '../notifications/notify-url.policy';
import { LockedOrder, OrdersRepository } from '../orders/orders.repository';
import { CreateRefundDto } from './dto/create-refund.dto';
import { RefundObject, toRefundObject } from './refund';
import { RefundsRepository } from './refunds.repository';

export interface CreatedRefund {
  refund: RefundObject;
  /** false: a refund with this out_refund_no already existed and is returned as it is. */
  created: boolean;
}

/**
 * Partial refunds. The order row is locked (a row lock) before its refundable amount is
 * read, so concurrent refunds of one order queue on that lock and their sum can never
 * exceed the order amount; a CHECK on orders.amount_refunded backs this up.
 */
@Injectable()
export class RefundsService {
  constructor(
    private readonly db: Db,
    private readonly refunds: RefundsRepository,
    private readonly orders: OrdersRepository,
    private readonly notifyUrls: NotifyUrlPolicy,
  ) {}

  async create(auth: RequestAuth, dto: CreateRefundDto): Promise<CreatedRefund> {
    checkRequest(auth, dto);
    this.notifyUrls.check(auth, dto.notify_url);
    const existing = await this.findRepeat(auth, dto);
    if (existing) return { refund: existing, created: false };
    return this.db.transaction(auth.merchantId, () => this.createLocked(auth, dto));
  }

  /**
   * The out_refund_no's lock, the order lock, the refund and the order's new refunded
   * amount: one transaction. The out_refund_no is locked first (always before an order, so
   * no two refunds wait on each other in a cycle): a concurrent request with the same
   * number, even for another order, is then always answered with its refund once it
   * commits, never refused meanwhile for its own order's state or amount left.
   */
  private async createLocked(auth: RequestAuth, dto: CreateRefundDto): Promise<CreatedRefund> {
    if (dto.out_refund_no !== undefined) await this.refunds.lockOutRefundNo(auth, dto.out_refund_no);
    const committedMeanwhile = await this.findRepeat(auth, dto);
    if (committedMeanwhile) return { refund: committedMeanwhile, created: false };
    const order = await this.lockOrder(auth, dto);
    const amount = refundableAmount(order, dto);

    const inserted = await this.refunds.insertIfAbsent(auth, {
      id: newId('rf'),
      orderId: order.id,
      outRefundNo: dto.out_refund_no ?? null,
      amount,
      currency: order.currency,
      reason: dto.reason ?? null,
      notifyUrl: dto.notify_url ?? null,
    });
    if (!inserted) {
      // A concurrent request with this out_refund_no (for another order) won the race.
      const winner = await this.findRepeat(auth, dto);
      if (!winner) throw new Error(`refund ${dto.out_refund_no} conflicted but cannot be read`);
      return { refund: winner, created: false };
    }
    await this.orders.applyRefundDelta(order.id, amount);
    return { refund: toRefundObject(inserted), created: true };
  }

  async getById(auth: RequestAuth, id: string): Promise<RefundObject> {
    const row = await this.refunds.findById(auth, id);
    if (!row) throw notFound('refund', id);
    return toRefundObject(row);
  }

  async getByOutRefundNo(auth: RequestAuth, outRefundNo: string): Promise<RefundObject> {
    const row = await this.refunds.findByOutRefundNo(auth, outRefundNo);
    if (!row) throw notFound('refund with out_refund_no', outRefundNo, 'out_refund_no');
    return toRefundObject(row);
  }

  /** The refunds of one order, newest first. */
  async listForOrder(auth: RequestAuth, orderId: string, page: PageQuery): Promise<Page<RefundObject>> {
    if (!(await this.orders.exists(auth, orderId))) throw notFound('order', orderId);
    const limit = page.limit ?? DEFAULT_PAGE_LIMIT;
    const rows = await this.refunds.listPageForOrder(auth, orderId, limit, page.starting_after);
    return toPage(rows, toRefundObject, 'refund', page);
  }

  /** The refund already created under this out_refund_no, if the request has one. */
  private async findRepeat(auth: RequestAuth, dto: CreateRefundDto): Promise<RefundObject | null> {
    if (dto.out_refund_no === undefined) return null;
    const row = await this.refunds.findByOutRefundNo(auth, dto.out_refund_no);
    return row ? toRefundObject(row) : null;
  }

  private async lockOrder(auth: RequestAuth, dto: CreateRefundDto): Promise<LockedOrder> {
    const [by, value] = dto.order_id ? (['id', dto.order_id] as const) : (['out_trade_no', dto.out_trade_no!] as const);
    const order = await this.orders.lockInScope(auth, by, value);
    if (!order) throw notFound('order', value, orderParam(dto));
    return order;
  }
}

/** Rules on the request alone: exactly one order reference; live refunds carry out_refund_no. */
function checkRequest(auth: RequestAuth, dto: CreateRefundDto): void {
  if (dto.order_id === undefined && dto.out_trade_no === undefined) {
    throw new DomainError('parameter_missing', 'Name the order to refund with order_id or out_trade_no.', 'order_id');
  }
  if (dto.order_id !== undefined && dto.out_trade_no !== undefined) {
    throw new DomainError('parameter_invalid', 'Send either order_id or out_trade_no, not both.', 'out_trade_no');
  }
  if (auth.environment === 'live' && dto.out_refund_no === undefined) {
    throw new DomainError('parameter_missing', 'out_refund_no is required for live refunds.', 'out_refund_no');
  }
}

/** The amount to refund: what was asked, or all that is left; refused beyond that or if unpaid. */
function refundableAmount(order: LockedOrder, dto: CreateRefundDto): number {
  if (order.status !== 'paid' && order.status !== 'partially_refunded') {
    throw new DomainError(
      'order_not_paid',
      `Only a paid order can be refunded; order ${order.id} is ${order.status}.`,
      orderParam(dto),
    );
  }
  const refundable = money(order.amount) - money(order.amount_refunded);
  const amount = dto.amount ?? refundable;
  if (amount > refundable) {
    throw new DomainError(
      'refund_amount_exceeded',
      // Minor units, as every amount of the API: "200 USD" would read as dollars, not cents.
      `The refund of ${amount} exceeds the ${refundable} still refundable on order ${order.id} (minor units of ${order.currency}).`,
      'amount',
    );
  }
  return amount;
}

function orderParam(dto: CreateRefundDto): 'order_id' | 'out_trade_no' {
  return dto.order_id ? 'order_id' : 'out_trade_no';
}
