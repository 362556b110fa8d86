import { Injectable } from '@nestjs/common';
import { RequestAuth } from '../common/auth/request-auth';
import { DomainError, notFound } from '../common/errors/domain-error';
import { Page } from '../common/http/api-response';
import { newId } from '../common/ids';
import { keysetPage, PageQuery } from '../common/pagination';
import { Db, NamedStatement } from '../database/db';
import { EventRecorder } from '../notifications/event-recorder.service';
import { NotifyUrlPolicy } from '../notifications/notify-url.policy';
import { CreateOrderDto } from './dto/create-order.dto';
import { ORDER_COLUMNS, OrderObject, OrderRow, toOrderObject } from './order';

/** Claims out_trade_no; no row back means the order exists already. */
export const INSERT_ORDER: NamedStatement = {
  name: 'kuko_insert_order',
  text: `INSERT INTO orders (id, merchant_id, environment, out_trade_no, amount, currency, subject, description,
                            metadata, notify_url, return_url)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
         ON CONFLICT ON CONSTRAINT orders_out_trade_no_key DO NOTHING
         RETURNING ${ORDER_COLUMNS}`,
};

export interface CreatedOrder {
  order: OrderObject;
  /** false: an order with this out_trade_no already existed and is returned as it is. */
  created: boolean;
}

@Injectable()
export class OrdersService {
  constructor(
    private readonly db: Db,
    private readonly events: EventRecorder,
    private readonly notifyUrls: NotifyUrlPolicy,
  ) {}

  /**
   * Business idempotency: the unique (merchant, environment, out_trade_no) constraint is
   * claimed with ON CONFLICT DO NOTHING; when it was taken, the existing order is read
   * (a fresh statement, so it sees a competitor that has just committed).
   */
  async create(auth: RequestAuth, dto: CreateOrderDto): Promise<CreatedOrder> {
    this.notifyUrls.check(auth, dto.notify_url);
    const inserted = await this.db.one<OrderRow>(INSERT_ORDER, [
      newId('ord'),
      auth.merchantId,
      auth.environment,
      dto.out_trade_no,
      dto.amount,
      dto.currency,
      dto.subject,
      dto.description ?? null,
      dto.metadata ?? {},
      dto.notify_url ?? null,
      dto.return_url ?? null,
    ]);
    if (inserted) return { order: toOrderObject(inserted), created: true };
    const existing = await this.findByOutTradeNo(auth, dto.out_trade_no);
    if (!existing) throw new Error(`order ${dto.out_trade_no} conflicted but cannot be read`);
    return { order: existing, created: false };
  }

  async getById(auth: RequestAuth, id: string): Promise<OrderObject> {
    const row = await this.db.one<OrderRow>(
      `SELECT ${ORDER_COLUMNS} FROM orders WHERE id = $1 AND merchant_id = $2 AND environment = $3`,
      [id, auth.merchantId, auth.environment],
    );
    if (!row) throw notFound('order', id);
    return toOrderObject(row);
  }

  async getByOutTradeNo(auth: RequestAuth, outTradeNo: string): Promise<OrderObject> {
    const order = await this.findByOutTradeNo(auth, outTradeNo);
    if (!order) throw notFound('order with out_trade_no', outTradeNo, 'out_trade_no');
    return order;
  }

  async findByOutTradeNo(auth: RequestAuth, outTradeNo: string): Promise<OrderObject | null> {
    const row = await this.db.one<OrderRow>(
      `SELECT ${ORDER_COLUMNS} FROM orders WHERE merchant_id = $1 AND environment = $2 AND out_trade_no = $3`,
      [auth.merchantId, auth.environment, outTradeNo],
    );
    return row ? toOrderObject(row) : null;
  }

  /** Newest first; `starting_after` is the last id of the previous page. */
  list(auth: RequestAuth, page: PageQuery): Promise<Page<OrderObject>> {
    return keysetPage(this.db, {
      table: 'orders',
      columns: ORDER_COLUMNS,
      where: 'merchant_id = $1 AND environment = $2',
      params: [auth.merchantId, auth.environment],
      page,
      object: 'order',
      map: toOrderObject,
    });
  }

  /** pending → closed; any other status is refused and left unchanged. */
  async close(auth: RequestAuth, id: string): Promise<OrderObject> {
    const closed = await this.db.one<OrderRow>(
      `UPDATE orders SET status = 'closed', closed_at = now()
        WHERE id = $1 AND merchant_id = $2 AND environment = $3 AND status = 'pending'
        RETURNING ${ORDER_COLUMNS}`,
      [id, auth.merchantId, auth.environment],
    );
    if (closed) {
      await this.events.orderChanged('order.closed', closed.id);
      return toOrderObject(closed);
    }
    const order = await this.getById(auth, id);
    throw new DomainError(
      'order_not_closable',
      `Only a pending order can be closed; order ${id} is ${order.status}.`,
      'id',
    );
  }
}
