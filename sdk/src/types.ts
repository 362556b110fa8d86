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
 * Merchant notifications (events) are not in the document yet: until its Event schemas
 * exist, they are written here around the generated Order and Refund. The union on `type`
 * is what lets `event.type === 'order.paid'` narrow `event.data.object` to an Order, which
 * a schema-generated `type: string` would not; keep it when the schemas arrive, built from them.
 */

export type EventType = 'order.paid' | 'order.closed' | 'refund.succeeded' | 'refund.failed';

interface EventBase {
  id: string;
  object: 'event';
  environment: Environment;
  created_at: string;
}

export interface OrderEvent extends EventBase {
  type: 'order.paid' | 'order.closed';
  /** The order exactly as its GET returned it when the event happened. */
  data: { object: Order };
}

export interface RefundEvent extends EventBase {
  type: 'refund.succeeded' | 'refund.failed';
  data: { object: Refund };
}

/** A merchant notification's body; narrow on `type` to get the object's type. */
export type Event = OrderEvent | RefundEvent;

export interface EventDelivery {
  status: 'pending' | 'delivered' | 'failed' | 'no_destination';
  attempts: number;
  next_attempt_at: string | null;
  last_attempt: { at: string; status_code: number | null; error: string | null; duration_ms: number } | null;
}

/** An event as `GET /v1/events/{id}` answers it: the notification plus its delivery state. */
export type EventWithDelivery = Event & { delivery: EventDelivery };

export interface EventListParams extends PageParams {
  type?: EventType;
  order_id?: string;
}
