import { applyDecorators } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiHeader, ApiProperty, ApiSchema, getSchemaPath } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger';
import { MAX_EVENT_ID_CHARS } from './webhook-event';
import { idPattern } from '../common/openapi/id-param';

/**
 * The provider's events as this service reads them (payment-events.handler.ts,
 * refund-events.handler.ts): required fields are the ones a handler refuses without.
 * Any other type is recorded and ignored, hence OtherProviderEvent.
 */
const KNOWN_TYPES = ['payment.succeeded', 'payment.failed', 'refund.succeeded', 'refund.failed'];
const TEXT = { type: 'string', minLength: 1 } as const;
// Ids this service made: any other form is refused (refuseUnlessIdOf).
const ORDER_ID = {
  type: 'string',
  pattern: idPattern('ord'),
  example: 'ord_89ec5e4902673c9c25cbd9b6704be3d1',
} as const;
const REFUND_ID = {
  type: 'string',
  pattern: idPattern('rf'),
  example: 'rf_0d4b3c2a19f8e7d6c5b4a39281706f5e',
} as const;
/** Optional text; sent as anything but a string, the event is refused (optionalString). */
const OPTIONAL_TEXT = { type: 'string', required: false } as const;

abstract class ProviderEventBase {
  @ApiProperty({
    ...TEXT,
    maxLength: MAX_EVENT_ID_CHARS,
    description: 'Must equal the webhook-id header',
    example: 'evt_demo_1',
  })
  id!: string;

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    description: 'An RFC 3339 time',
    example: '2026-09-21T08:01:00Z',
  })
  created_at!: string;
}

@ApiSchema({ name: 'PaymentSucceededData' })
class PaymentSucceededData {
  @ApiProperty(ORDER_ID)
  order_id!: string;

  // Read as a safe integer (webhook-event.ts), whatever its sign: a mismatch is answered `rejected`.
  @ApiProperty({
    type: 'integer',
    minimum: -Number.MAX_SAFE_INTEGER,
    maximum: Number.MAX_SAFE_INTEGER,
    description: 'Must equal the order amount',
    example: 2990,
  })
  amount!: number;

  @ApiProperty({ ...TEXT, description: 'Must equal the order currency', example: 'USD' })
  currency!: string;

  @ApiProperty({ ...TEXT, example: 'pay_1' })
  provider_payment_id!: string;
}

@ApiSchema({ name: 'PaymentFailedData' })
class PaymentFailedData {
  @ApiProperty(ORDER_ID)
  order_id!: string;

  @ApiProperty({ ...OPTIONAL_TEXT, example: 'card_declined' })
  failure_code?: string;

  @ApiProperty({ ...OPTIONAL_TEXT, example: 'The card was declined.' })
  failure_message?: string;
}

@ApiSchema({ name: 'RefundSucceededData' })
class RefundSucceededData {
  @ApiProperty(REFUND_ID)
  refund_id!: string;
}

@ApiSchema({ name: 'RefundFailedData' })
class RefundFailedData {
  @ApiProperty(REFUND_ID)
  refund_id!: string;

  @ApiProperty({ ...OPTIONAL_TEXT, example: 'account_closed' })
  failure_code?: string;

  @ApiProperty({ ...OPTIONAL_TEXT, example: 'The account is closed.' })
  failure_message?: string;
}

@ApiSchema({ name: 'PaymentSucceededEvent', description: 'Pays a pending order whose amount and currency match.' })
export class PaymentSucceededEvent extends ProviderEventBase {
  @ApiProperty({ enum: ['payment.succeeded'], example: 'payment.succeeded' })
  type!: 'payment.succeeded';

  @ApiProperty({ type: PaymentSucceededData })
  data!: PaymentSucceededData;
}

@ApiSchema({ name: 'PaymentFailedEvent', description: 'Recorded; the order stays payable.' })
export class PaymentFailedEvent extends ProviderEventBase {
  @ApiProperty({ enum: ['payment.failed'], example: 'payment.failed' })
  type!: 'payment.failed';

  @ApiProperty({ type: PaymentFailedData })
  data!: PaymentFailedData;
}

@ApiSchema({ name: 'RefundSucceededEvent', description: 'Settles a pending refund as succeeded.' })
export class RefundSucceededEvent extends ProviderEventBase {
  @ApiProperty({ enum: ['refund.succeeded'], example: 'refund.succeeded' })
  type!: 'refund.succeeded';

  @ApiProperty({ type: RefundSucceededData })
  data!: RefundSucceededData;
}

@ApiSchema({
  name: 'RefundFailedEvent',
  description: 'Settles a pending refund as failed; its amount is refundable again.',
})
export class RefundFailedEvent extends ProviderEventBase {
  @ApiProperty({ enum: ['refund.failed'], example: 'refund.failed' })
  type!: 'refund.failed';

  @ApiProperty({ type: RefundFailedData })
  data!: RefundFailedData;
}

@ApiSchema({ name: 'OtherProviderEvent', description: 'Any other type: recorded and answered with status ignored.' })
export class OtherProviderEvent extends ProviderEventBase {
  @ApiProperty({ ...TEXT, not: { enum: KNOWN_TYPES }, example: 'dispute.created' })
  type!: string;

  @ApiProperty({ type: 'object', additionalProperties: true, example: {} })
  data!: Record<string, unknown>;
}

const PROVIDER_EVENTS = [
  PaymentSucceededEvent,
  PaymentFailedEvent,
  RefundSucceededEvent,
  RefundFailedEvent,
  OtherProviderEvent,
];

const PROVIDER_EVENT_BODY: SchemaObject = {
  oneOf: PROVIDER_EVENTS.map((event) => ({ $ref: getSchemaPath(event) })),
};

/** The signed request of the receiver: Standard Webhooks headers and one of the events. */
export function ApiProviderEvent(): MethodDecorator {
  return applyDecorators(
    ApiHeader({ name: 'webhook-id', required: true, schema: { type: 'string', minLength: 1 } }),
    ApiHeader({
      name: 'webhook-timestamp',
      required: true,
      description: 'Unix seconds, within 5 minutes of now',
      schema: { type: 'string', pattern: '^[0-9]+$' },
    }),
    ApiHeader({
      name: 'webhook-signature',
      required: true,
      description: 'v1,<base64 HMAC-SHA256 of id.timestamp.body>, several space-separated',
      schema: { type: 'string', minLength: 1 },
    }),
    ApiExtraModels(...PROVIDER_EVENTS),
    ApiBody({ schema: PROVIDER_EVENT_BODY }),
  );
}

@ApiSchema({ name: 'WebhookReceipt', description: 'The event was received (and, unless a duplicate, recorded).' })
export class WebhookReceiptSchema {
  @ApiProperty({ enum: [true], type: 'boolean', example: true })
  received!: true;

  @ApiProperty({ description: 'A delivery of an event id already recorded: nothing changed', example: false })
  duplicate!: boolean;

  @ApiProperty({
    enum: ['processed', 'rejected', 'ignored'],
    required: false,
    description: 'Absent on a duplicate. rejected: amount or currency mismatch; ignored: nothing to change',
    example: 'processed',
  })
  status?: 'processed' | 'rejected' | 'ignored';
}
