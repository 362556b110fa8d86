/**
 * The API's objects and request bodies, shaped exactly like the component schemas of the
 * server's OpenAPI document (`Order`, `Refund`, `Account`, `Error`, `Event`,
 * `CreateOrderDto`, `CreateRefundDto`). Written by hand until that document describes them
 * all; then this module re-exports the types generated into `./generated/openapi.ts` by
 * `npm run generate-types` (see README.md), and every other module keeps importing from here.
 */

export type Environment = 'test' | 'live';

export type OrderStatus = 'pending' | 'paid' | 'partially_refunded' | 'refunded' | 'closed';

export interface Order {
  id: string;
  object: 'order';
  out_trade_no: string;
  /** Integer minor units. */
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

export type RefundStatus = 'pending' | 'succeeded' | 'failed';

export interface Refund {
  id: string;
  object: 'refund';
  order_id: string;
  out_refund_no: string | null;
  amount: number;
  currency: string;
  status: RefundStatus;
  reason: string | null;
  environment: Environment;
  created_at: string;
  succeeded_at: string | null;
  failed_at: string | null;
}

export interface Account {
  id: string;
  object: 'account';
  name: string;
  environment: Environment;
  created_at: string;
}

/** Categories of the error envelope; `api_connection_error` exists only in the client. */
export type ErrorType =
  | 'invalid_request_error'
  | 'idempotency_error'
  | 'authentication_error'
  | 'rate_limit_error'
  | 'api_error';

/** The body of every error answer (the `Error` schema). */
export interface ApiErrorBody {
  code: number;
  error: string;
  type: ErrorType;
  message: string;
  param: string | null;
  request_id: string;
}

export interface CreateOrderDto {
  /** 1–64 characters of A-Z, a-z, 0-9, _ and -; unique per merchant and environment, forever. */
  out_trade_no: string;
  /** Integer minor units, 1 … 100000000000. */
  amount: number;
  /** ISO 4217 alpha code, upper case. */
  currency: string;
  subject: string;
  description?: string;
  notify_url?: string;
  return_url?: string;
  metadata?: Record<string, string>;
}

interface CreateRefundFields {
  /** Integer minor units; default: all that is still refundable. */
  amount?: number;
  /** Required in live, optional in test; unique per merchant and environment, forever. */
  out_refund_no?: string;
  reason?: string;
}

/** Exactly one of `order_id` and `out_trade_no` names the order to refund. */
export type CreateRefundDto =
  | (CreateRefundFields & { order_id: string; out_trade_no?: never })
  | (CreateRefundFields & { out_trade_no: string; order_id?: never });

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

export interface PageParams {
  /** 1–100, default 10. */
  limit?: number;
  /** The last id of the previous page: list the objects created before it. */
  starting_after?: string;
}

export type OrderListParams = PageParams;

export interface RefundListParams extends PageParams {
  /** The order whose refunds to list. */
  order_id: string;
}

export interface EventListParams extends PageParams {
  type?: EventType;
  order_id?: string;
}
