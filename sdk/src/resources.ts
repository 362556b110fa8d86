import { KukoPayAPIError } from './errors.ts';
import { ListRequest, Page } from './list.ts';
import {
  LastResponse,
  PostOptions,
  RequestOptions,
  RequestSender,
  WithLastResponse,
  withLastResponse,
} from './request-sender.ts';
import type {
  Account,
  CreateOrderDto,
  CreateRefundDto,
  EventAttempt,
  EventListParams,
  EventWithDelivery,
  NotificationSecret,
  Order,
  OrderListParams,
  PageParams,
  Refund,
  RefundListParams,
} from './types.ts';

type Query = Record<string, string | number | undefined>;

/** The requests every resource makes: one object, or one page of a list. */
class Resource {
  constructor(protected readonly sender: RequestSender) {}

  protected async object<T extends object>(
    method: 'GET' | 'POST',
    path: string,
    options: PostOptions | undefined,
    extra: { body?: object; query?: Query } = {},
  ): Promise<WithLastResponse<T>> {
    const { body, lastResponse } = await this.sender.send({ method, path, options, ...extra });
    return withLastResponse(body.data as T, lastResponse);
  }

  /** `path` is a function, so that an invalid id is a rejection of the list, not a throw of list(). */
  protected paginate<T extends { id: string }>(
    path: () => string,
    params: PageParams & Query,
    options?: RequestOptions,
  ) {
    const fetchPage = async (page: PageParams & Query) => {
      const { body, lastResponse } = await this.sender.send({ method: 'GET', path: path(), query: page, options });
      if (!Array.isArray(body.data)) throw notAPage(lastResponse);
      const result: Page<T> = { data: body.data as T[], has_more: body.has_more === true };
      return withLastResponse(result, lastResponse);
    };
    return new ListRequest<T, PageParams & Query>(fetchPage, params);
  }
}

/** A list's answer whose `data` is not an array: no page of the API. */
function notAPage({ status, requestId, idempotencyKey, headers }: LastResponse): KukoPayAPIError {
  return new KukoPayAPIError({
    message: `The server answered ${status} with a body that is not a page of a KukoPay list.`,
    status,
    code: null,
    param: null,
    requestId,
    idempotencyKey,
    headers,
  });
}

/** A reference the lookup needs: without it, the GET would list instead of find. */
function reference(value: string, name: string): string {
  if (typeof value !== 'string' || value === '') {
    throw new TypeError(`${name} must be a non-empty string, not ${JSON.stringify(value)}.`);
  }
  return value;
}

/**
 * An id as one path segment. `encodeURIComponent` leaves `.` and `..` as they are, and the
 * URL would then drop them and name another route (`orders.retrieve('.')` would list the
 * orders), so those and the empty id are refused before anything is sent: the methods
 * that take an id are async, so the TypeError is their rejection, as any other failure.
 */
function segment(id: string): string {
  if (typeof id !== 'string' || id === '' || id === '.' || id === '..') {
    throw new TypeError(`An id must be a non-empty string other than "." and "..", not ${JSON.stringify(id)}.`);
  }
  return encodeURIComponent(id);
}

export class Orders extends Resource {
  /** 201 creates; 200 returns the order that already has this out_trade_no (see lastResponse.status). */
  create(params: CreateOrderDto, options?: PostOptions) {
    return this.object<Order>('POST', '/v1/orders', options, { body: params });
  }

  async retrieve(id: string, options?: RequestOptions) {
    return this.object<Order>('GET', `/v1/orders/${segment(id)}`, options);
  }

  async retrieveByOutTradeNo(outTradeNo: string, options?: RequestOptions) {
    const query = { out_trade_no: reference(outTradeNo, 'outTradeNo') };
    return this.object<Order>('GET', '/v1/orders', options, { query });
  }

  /** Newest first; `for await` walks every page. */
  list(params: OrderListParams = {}, options?: RequestOptions) {
    return this.paginate<Order>(() => '/v1/orders', { ...params }, options);
  }

  async close(id: string, options?: PostOptions) {
    return this.object<Order>('POST', `/v1/orders/${segment(id)}/close`, options);
  }
}

export class Refunds extends Resource {
  /** 201 creates; 200 returns the refund that already has this out_refund_no. */
  create(params: CreateRefundDto, options?: PostOptions) {
    return this.object<Refund>('POST', '/v1/refunds', options, { body: params });
  }

  async retrieve(id: string, options?: RequestOptions) {
    return this.object<Refund>('GET', `/v1/refunds/${segment(id)}`, options);
  }

  async retrieveByOutRefundNo(outRefundNo: string, options?: RequestOptions) {
    const query = { out_refund_no: reference(outRefundNo, 'outRefundNo') };
    return this.object<Refund>('GET', '/v1/refunds', options, { query });
  }

  /** The refunds of one order, newest first; `for await` walks every page. */
  list(params: RefundListParams, options?: RequestOptions) {
    const { order_id, ...page } = params ?? ({} as Partial<RefundListParams>);
    return this.paginate<Refund>(() => `/v1/orders/${segment(order_id as string)}/refunds`, page, options);
  }
}

export class Events extends Resource {
  async retrieve(id: string, options?: RequestOptions) {
    return this.object<EventWithDelivery>('GET', `/v1/events/${segment(id)}`, options);
  }

  /** Newest first, optionally of one type or one order; `for await` walks every page. */
  list(params: EventListParams = {}, options?: RequestOptions) {
    return this.paginate<EventWithDelivery>(() => '/v1/events', { ...params }, options);
  }

  /** One more delivery attempt now, outside the schedule (answered 202). */
  async redeliver(id: string, options?: PostOptions) {
    return this.object<EventWithDelivery>('POST', `/v1/events/${segment(id)}/redeliver`, options);
  }

  /** Every delivery attempt of the event, oldest first (one answer: the list is never paged). */
  async listAttempts(id: string, options?: RequestOptions) {
    return this.object<EventAttempt[]>('GET', `/v1/events/${segment(id)}/attempts`, options);
  }
}

export class AccountResource extends Resource {
  /** The merchant and environment the API key belongs to. */
  retrieve(options?: RequestOptions) {
    return this.object<Account>('GET', '/v1/account', options);
  }

  /**
   * A new notification secret for the key's environment, shown only in this answer; the
   * previous one keeps signing beside it until `previous_expires_at`.
   */
  rollNotificationSecret(options?: PostOptions) {
    return this.object<NotificationSecret>('POST', '/v1/account/notification_secret/roll', options);
  }
}

/**
 * The sandbox's stand-ins for the payment provider (a `kuko_test_` key only; a live key
 * gets 404): each settles an object the way the provider's webhook would.
 */
export class TestHelpers extends Resource {
  readonly orders = {
    /** Pays a pending order: fulfilment and its `order.paid` event, as a payment webhook. */
    pay: async (id: string, options?: PostOptions) =>
      this.object<Order>('POST', `/v1/test_helpers/orders/${segment(id)}/pay`, options),
  };

  readonly refunds = {
    /** Settles a pending refund as succeeded (`refund.succeeded`). */
    succeed: async (id: string, options?: PostOptions) =>
      this.object<Refund>('POST', `/v1/test_helpers/refunds/${segment(id)}/succeed`, options),
    /** Settles a pending refund as failed (`refund.failed`); its amount is refundable again. */
    fail: async (id: string, options?: PostOptions) =>
      this.object<Refund>('POST', `/v1/test_helpers/refunds/${segment(id)}/fail`, options),
  };
}
