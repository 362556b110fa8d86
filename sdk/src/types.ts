/**
 * The API's objects, request bodies and list parameters, taken from the types generated
 * from the server's OpenAPI document into `./generated/openapi.ts` (`npm run sdk:types` at
 * the repository root regenerates them; a test fails when the committed file drifts from
 * the document). Every other module imports them from here, under these names.
 *
 * A few types are written here, built from the generated ones, where the document cannot
 * say what a caller needs; each says why.
 */
import type { components, operations } from './generated/openapi.ts';

type Schemas = components['schemas'];

export type Order = Schemas['Order'];
export type Refund = Schemas['Refund'];
export type Account = Schemas['Account'];
/** A rolled notification secret (`account.rollNotificationSecret`), shown once. */
export type NotificationSecret = Schemas['NotificationSecret'];

export type Environment = Account['environment'];
export type OrderStatus = Order['status'];
export type RefundStatus = Refund['status'];

/** The body of every error answer (the `Error` schema). */
export type ApiErrorBody = Schemas['Error'];

/** Categories of the error envelope; `api_connection_error` exists only in the client. */
export type ErrorType = ApiErrorBody['type'];

export type CreateOrderDto = Schemas['CreateOrderDto'];

type RefundTarget = 'order_id' | 'out_trade_no';
type CreateRefundFields = Omit<Schemas['CreateRefundDto'], RefundTarget>;

/**
 * Exactly one of `order_id` and `out_trade_no` names the order to refund. The document says
 * so with a `oneOf` of `required` lists, which openapi-typescript turns into
 * `& (unknown | unknown)`: both fields stay optional there, so the union is spelled out here.
 */
export type CreateRefundDto =
  | (CreateRefundFields & Required<Pick<Schemas['CreateRefundDto'], 'order_id'>> & { out_trade_no?: never })
  | (CreateRefundFields & Required<Pick<Schemas['CreateRefundDto'], 'out_trade_no'>> & { order_id?: never });

/** `limit` (1–100, default 10) and `starting_after` (the last id of the previous page). */
export type PageParams = NonNullable<operations['listOrderRefunds']['parameters']['query']>;

/** `out_trade_no` turns `GET /v1/orders` into a lookup of one order: that is `retrieveByOutTradeNo`. */
export type OrderListParams = Omit<NonNullable<operations['listOrders']['parameters']['query']>, 'out_trade_no'>;

export interface RefundListParams extends PageParams {
  /** The order whose refunds to list (the `{id}` of `GET /v1/orders/{id}/refunds`). */
  order_id: operations['listOrderRefunds']['parameters']['path']['id'];
}

/*
 * Merchant notifications (events). The document has one schema per event type, whose
 * `data.object` is that type's object, so `event.type === 'order.paid'` narrows
 * `event.data.object` to an Order.
 */

/** A merchant notification's body; narrow on `type` to get the object's type. */
export type Event = Schemas['Event'];

export type EventType = Event['type'];

export type OrderEvent = Extract<Event, { type: `order.${string}` }>;
export type RefundEvent = Extract<Event, { type: `refund.${string}` }>;

export type EventDelivery = Schemas['EventDelivery'];

/** An event as `GET /v1/events/{id}` answers it: the notification plus its delivery state. */
export type EventWithDelivery = Schemas['EventWithDelivery'];

/** One delivery attempt (`GET /v1/events/{id}/attempts`). */
export type EventAttempt = Schemas['EventAttempt'];

/** `type`, `order_id` (its refunds' events included), `limit` and `starting_after`. */
export type EventListParams = NonNullable<operations['listEvents']['parameters']['query']>;
