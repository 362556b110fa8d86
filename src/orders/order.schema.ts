import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { MAX_AMOUNT } from './dto/create-order.dto';
import type { OrderObject } from './order';
import { idPattern } from '../common/openapi/id-param';

export const ORDER_EXAMPLE: OrderObject = {
  id: 'ord_89ec5e4902673c9c25cbd9b6704be3d1',
  object: 'order',
  out_trade_no: 'ORDER_20260921_0001',
  amount: 2990,
  currency: 'USD',
  subject: 'Annual plan',
  description: null,
  status: 'pending',
  amount_refunded: 0,
  environment: 'test',
  metadata: { customer: 'c_42' },
  notify_url: 'https://merchant.example/kukopay/notify',
  return_url: null,
  created_at: '2026-09-21T08:00:00.000Z',
  paid_at: null,
  closed_at: null,
};

const nullableTime = (description: string) =>
  ApiProperty({ type: 'string', format: 'date-time', nullable: true, description, example: null });

/** The order object as every endpoint answers it (toOrderObject in order.ts). */
@ApiSchema({ name: 'Order', description: 'An order: what the customer is asked to pay.' })
export class OrderSchema implements OrderObject {
  @ApiProperty({ pattern: idPattern('ord'), example: ORDER_EXAMPLE.id })
  id!: string;

  @ApiProperty({ enum: ['order'], example: 'order' })
  object!: 'order';

  @ApiProperty({ pattern: '^[A-Za-z0-9_-]{1,64}$', example: ORDER_EXAMPLE.out_trade_no })
  out_trade_no!: string;

  @ApiProperty({ type: 'integer', minimum: 1, maximum: MAX_AMOUNT, description: 'Integer minor units', example: 2990 })
  amount!: number;

  @ApiProperty({ pattern: '^[A-Z]{3}$', example: 'USD' })
  currency!: string;

  @ApiProperty({ example: ORDER_EXAMPLE.subject })
  subject!: string;

  @ApiProperty({ type: 'string', nullable: true, example: null })
  description!: string | null;

  @ApiProperty({ enum: ['pending', 'paid', 'partially_refunded', 'refunded', 'closed'], example: 'pending' })
  status!: OrderObject['status'];

  @ApiProperty({ type: 'integer', minimum: 0, description: 'Pending and succeeded refunds, minor units', example: 0 })
  amount_refunded!: number;

  @ApiProperty({ enum: ['test', 'live'], description: 'Decided by the API key', example: 'test' })
  environment!: OrderObject['environment'];

  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, example: ORDER_EXAMPLE.metadata })
  metadata!: Record<string, string>;

  @ApiProperty({ type: 'string', nullable: true, example: ORDER_EXAMPLE.notify_url })
  notify_url!: string | null;

  @ApiProperty({ type: 'string', nullable: true, example: null })
  return_url!: string | null;

  @ApiProperty({ type: 'string', format: 'date-time', example: ORDER_EXAMPLE.created_at })
  created_at!: string;

  @nullableTime('When the payment webhook paid it')
  paid_at!: string | null;

  @nullableTime('When it was closed')
  closed_at!: string | null;
}
