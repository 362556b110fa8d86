import { newId } from '../common/ids';
import { Environment } from '../domain/environment';

export const EVENT_TYPES = ['order.paid', 'order.closed', 'refund.succeeded', 'refund.failed'] as const;
export type EventType = (typeof EVENT_TYPES)[number];
export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'no_destination';

export function newEventId(): string {
  return newId('evt');
}

/** An events row as selected by EVENT_COLUMNS. */
export interface EventRow {
  id: string;
  merchant_id: string;
  environment: Environment;
  type: EventType;
  order_id: string;
  refund_id: string | null;
  data: { object: unknown };
  created_at: Date;
  notify_url: string | null;
  delivery_status: DeliveryStatus;
  next_slot: number;
  attempts: number;
  next_attempt_at: Date | null;
  last_attempt_at: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  last_duration_ms: number | null;
}

export const EVENT_COLUMNS = `id, merchant_id, environment, type, order_id, refund_id, data, created_at, notify_url,
  delivery_status, next_slot, attempts, next_attempt_at, last_attempt_at, last_status_code, last_error,
  last_duration_ms`;

/** The event as it is sent to the merchant: the notification body. */
export interface EventObject {
  id: string;
  object: 'event';
  type: EventType;
  environment: Environment;
  created_at: string;
  data: { object: unknown };
}

export interface Delivery {
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: string | null;
  last_attempt: { at: string; status_code: number | null; error: string | null; duration_ms: number } | null;
}

export function toEventObject(row: EventRow): EventObject {
  return {
    id: row.id,
    object: 'event',
    type: row.type,
    environment: row.environment,
    created_at: row.created_at.toISOString(),
    data: row.data,
  };
}

/** The event of the events API: the notification body plus where its delivery stands. */
export function toEventWithDelivery(row: EventRow): EventObject & { delivery: Delivery } {
  return {
    ...toEventObject(row),
    delivery: {
      status: row.delivery_status,
      attempts: row.attempts,
      next_attempt_at: row.next_attempt_at?.toISOString() ?? null,
      last_attempt: row.last_attempt_at
        ? {
            at: row.last_attempt_at.toISOString(),
            status_code: row.last_status_code,
            error: row.last_error,
            duration_ms: row.last_duration_ms ?? 0,
          }
        : null,
    },
  };
}

export interface AttemptRow {
  attempted_at: Date;
  url: string;
  kind: 'scheduled' | 'redelivery';
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  response_body: string | null;
}

export function toAttemptObject(row: AttemptRow) {
  return {
    object: 'notification_attempt',
    at: row.attempted_at.toISOString(),
    url: row.url,
    kind: row.kind,
    status_code: row.status_code,
    error: row.error,
    duration_ms: row.duration_ms,
    response_body: row.response_body,
  };
}
