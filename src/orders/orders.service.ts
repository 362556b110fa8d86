import { Injectable } from '@nestjs/common';
import { RequestAuth } from '../common/auth/request-auth';
import { DomainError, notFound } from '../common/errors/domain-error';
import { Page } from '../common/http/api-response';
import { newId } from '../common/ids';
import { DEFAULT_PAGE_LIMIT, PageQuery, toPage } from '../common/pagination';
import { Db } from '../database/db';
import { EventRecorder } from '../notifications/event-recorder.service';
import { NotifyUrlPolicy } from '../notifications/notify-url.policy';
import { CreateOrderDto } from './dto/create-order.dto';
import { OrderObject, orderChange, toOrderObject } from './order';
import { OrdersRepository } from './orders.repository';

export interface CreatedOrder {
  order: OrderObject;
  /** false: an order with this out_trade_no already existed and is returned as it is. */
  created: boolean;
}

@Injectable()
export class OrdersService {
  constructor(
    private readonly db: Db,
    private readonly orders: OrdersRepository,
    private readonly events: EventRecorder,
    private readonly notifyUrls: NotifyUrlPolicy,
  ) {}

  /**
   * Business idempotency: the unique (merchant, environment, out_trade_no) constraint is
   * claimed with ON CONFLICT DO NOTHING; when it was taken, the existing order is read
   * (a fresh statement, so it sees a competitor that has just committed). One write, so
   * no transaction of its own: without an Idempotency-Key it runs in autocommit. It waits
   * on a competitor's uncommitted order with the same out_trade_no, so it counts against
   * the merchant's share of write slots (Db.write).
   */
  async create(auth: RequestAuth, dto: CreateOrderDto): Promise<CreatedOrder> {
    this.notifyUrls.check(auth, dto.notify_url);
    const inserted = await this.db.write(auth.merchantId, () => this.insert(auth, dto));
    if (inserted) return { order: toOrderObject(inserted), created: true };
    const existing = await this.findByOutTradeNo(auth, dto.out_trade_no);
    if (!existing) throw new Error(`order ${dto.out_trade_no} conflicted but cannot be read`);
    return { order: existing, created: false };
  }

  private insert(auth: RequestAuth, dto: CreateOrderDto) {
    return this.orders.insertIfAbsent(auth, {
      id: newId('ord'),
      outTradeNo: dto.out_trade_no,
      amount: dto.amount,
      currency: dto.currency,
      subject: dto.subject,
      description: dto.description ?? null,
      metadata: dto.metadata ?? {},
      notifyUrl: dto.notify_url ?? null,
      returnUrl: dto.return_url ?? null,
    });
  }

  async getById(auth: RequestAuth, id: string): Promise<OrderObject> {
    const row = await this.orders.findById(auth, id);
    if (!row) throw notFound('order', id);
    return toOrderObject(row);
  }

  async getByOutTradeNo(auth: RequestAuth, outTradeNo: string): Promise<OrderObject> {
    const order = await this.findByOutTradeNo(auth, outTradeNo);
    if (!order) throw notFound('order with out_trade_no', outTradeNo, 'out_trade_no');
    return order;
  }

  async findByOutTradeNo(auth: RequestAuth, outTradeNo: string): Promise<OrderObject | null> {
    const row = await this.orders.findByOutTradeNo(auth, outTradeNo);
    return row ? toOrderObject(row) : null;
  }

  /** Newest first; `starting_after` is the last id of the previous page. */
  async list(auth: RequestAuth, page: PageQuery): Promise<Page<OrderObject>> {
    const rows = await this.orders.listPage(auth, page.limit ?? DEFAULT_PAGE_LIMIT, page.starting_after);
    return toPage(rows, toOrderObject, 'order', page);
  }

  /** pending → closed, with its event; any other status is refused and left unchanged. */
  close(auth: RequestAuth, id: string): Promise<OrderObject> {
    return this.db.transaction(auth.merchantId, async () => {
      const closed = await this.orders.closeIfPending(auth, id);
      if (!closed) throw await this.notClosable(auth, id);
      await this.events.record('order.closed', orderChange(closed));
      return toOrderObject(closed);
    });
  }

  private async notClosable(auth: RequestAuth, id: string): Promise<DomainError> {
    const order = await this.getById(auth, id);
    return new DomainError(
      'order_not_closable',
      `Only a pending order can be closed; order ${id} is ${order.status}.`,
      'id',
    );
  }
}
