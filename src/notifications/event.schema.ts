import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { registerNotificationEvents } from '../common/openapi/notification-webhooks';
import { Delivery, DeliveryStatus, EVENT_TYPES, EventObject, EventType, toAttemptObject } from './event';
import { idPattern } from '../common/openapi/id-param';

type AttemptObject = ReturnType<typeof toAttemptObject>;

/**
 * The events of merchant notifications as the code answers them (toEventObject,
 * toEventWithDelivery and toAttemptObject in event.ts; docs/notifications.md). The
 * `Order` and `Refund` schemas are named, not imported: notifications/ knows no feature
 * (the orders and refunds controllers put those schemas in the document).
 */
const EVENT_ID = { pattern: idPattern('evt'), example: 'evt_6c1f0e9d8b7a4c3e2f1d0a9b8c7e6f5d' };
const TIME = { type: 'string', format: 'date-time' } as const;
const DELIVERY_STATUSES: DeliveryStatus[] = ['pending', 'delivered', 'failed', 'no_destination'];
const ATTEMPT_ERRORS =
  'unexpected_status (see status_code), timeout, connection_refused, connection_reset, dns_error, tls_error, ' +
  'connection_error, destination_forbidden, invalid_url, secret_unreadable (nothing was sent: no notification ' +
  "secret can be opened under the server's ENCRYPTION_KEY; roll it); null when a whole 2xx answer came in time (a 2xx whose " +
  'body was cut off is connection_reset, one still arriving at the timeout timeout, with its status_code)';

const ATTEMPT_EXAMPLE: AttemptObject = {
  object: 'notification_attempt',
  at: '2026-09-21T08:01:00.120Z',
  url: 'https://merchant.example/kukopay/notify',
  kind: 'scheduled',
  status_code: 200,
  error: null,
  duration_ms: 84,
  response_body: 'ok',
};

/** The notification body, as posted to notify_url. */
@ApiSchema({
  name: 'Event',
  description: 'A notification: what changed, with the object as its GET returned it then. Deduplicate by id.',
})
export class EventSchema implements EventObject {
  @ApiProperty({ ...EVENT_ID, description: 'Also the webhook-id header, the same on every attempt' })
  id!: string;

  @ApiProperty({ enum: ['event'], example: 'event' })
  object!: 'event';

  @ApiProperty({ enum: EVENT_TYPES, example: 'order.paid' })
  type!: EventType;

  @ApiProperty({ enum: ['test', 'live'], example: 'test' })
  environment!: EventObject['environment'];

  @ApiProperty({ ...TIME, example: '2026-09-21T08:01:00.000Z' })
  created_at!: string;

  /** Written per type in the document, with its type's object (addNotificationWebhooks). */
  @ApiProperty({ type: 'object', additionalProperties: true })
  data!: { object: unknown };
}

@ApiSchema({ name: 'EventAttemptSummary', description: 'The latest attempt to deliver the event.' })
class LastAttemptSchema {
  @ApiProperty({ ...TIME, example: ATTEMPT_EXAMPLE.at })
  at!: string;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'The answer status, also when the rest of the answer failed; null when none came',
    example: 200,
  })
  status_code!: number | null;

  @ApiProperty({ type: 'string', nullable: true, description: ATTEMPT_ERRORS, example: null })
  error!: string | null;

  @ApiProperty({ type: 'integer', minimum: 0, example: 84 })
  duration_ms!: number;
}

@ApiSchema({ name: 'EventDelivery', description: 'Where the delivery of the event stands.' })
class DeliverySchema implements Delivery {
  @ApiProperty({
    enum: DELIVERY_STATUSES,
    description: 'no_destination: the object had no notify_url, nothing is sent',
    example: 'delivered',
  })
  status!: DeliveryStatus;

  @ApiProperty({ type: 'integer', minimum: 0, description: 'Attempts made, redeliveries included', example: 1 })
  attempts!: number;

  @ApiProperty({ ...TIME, nullable: true, description: 'When the next scheduled attempt is due', example: null })
  next_attempt_at!: string | null;

  @ApiProperty({ type: LastAttemptSchema, nullable: true, description: 'null before the first attempt' })
  last_attempt!: LastAttemptSchema | null;
}

/** An event as the events API answers it. */
@ApiSchema({ name: 'EventWithDelivery', description: 'A notification event and where its delivery stands.' })
export class EventWithDeliverySchema extends EventSchema {
  @ApiProperty({ type: DeliverySchema })
  delivery!: DeliverySchema;
}

/** One attempt to deliver an event. */
@ApiSchema({ name: 'EventAttempt', description: 'One attempt to deliver an event, scheduled or asked for.' })
export class EventAttemptSchema implements AttemptObject {
  @ApiProperty({ enum: ['notification_attempt'], example: 'notification_attempt' })
  object!: 'notification_attempt';

  @ApiProperty({ ...TIME, example: ATTEMPT_EXAMPLE.at })
  at!: string;

  @ApiProperty({ description: 'Where it was posted', example: ATTEMPT_EXAMPLE.url })
  url!: string;

  @ApiProperty({
    enum: ['scheduled', 'redelivery'],
    description: 'redelivery: asked for with POST /v1/events/{id}/redeliver',
    example: 'scheduled',
  })
  kind!: AttemptObject['kind'];

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'The answer status, also when the rest of the answer failed; null when none came',
    example: 200,
  })
  status_code!: number | null;

  @ApiProperty({ type: 'string', nullable: true, description: ATTEMPT_ERRORS, example: null })
  error!: string | null;

  @ApiProperty({ type: 'integer', minimum: 0, example: 84 })
  duration_ms!: number;

  @ApiProperty({ type: 'string', nullable: true, description: 'The first 1 KiB of the answer', example: 'ok' })
  response_body!: string | null;
}

registerNotificationEvents(
  { schema: 'Event', extendedBy: ['EventWithDelivery'] },
  { type: 'order.paid', summary: 'An order was paid', objectSchema: 'Order' },
  { type: 'order.closed', summary: 'An order was closed', objectSchema: 'Order' },
  { type: 'refund.succeeded', summary: 'A refund succeeded', objectSchema: 'Refund' },
  { type: 'refund.failed', summary: 'A refund failed', objectSchema: 'Refund' },
);
