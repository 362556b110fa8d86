import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { RefundObject } from './refund';
import { idPattern } from '../common/openapi/id-param';

export const REFUND_EXAMPLE: RefundObject = {
  id: 'rf_0d4b3c2a19f8e7d6c5b4a39281706f5e',
  object: 'refund',
  order_id: 'ord_89ec5e4902673c9c25cbd9b6704be3d1',
  out_refund_no: 'REFUND_20260922_0001',
  amount: 1000,
  currency: 'USD',
  status: 'pending',
  reason: null,
  environment: 'test',
  created_at: '2026-09-22T08:00:00.000Z',
  succeeded_at: null,
  failed_at: null,
};

const nullableTime = (description: string) =>
  ApiProperty({ type: 'string', format: 'date-time', nullable: true, description, example: null });

/** The refund object as every endpoint answers it (toRefundObject in refund.ts). */
@ApiSchema({
  name: 'Refund',
  description: "A refund of part or all of a paid order; the provider's webhook settles it.",
})
export class RefundSchema implements RefundObject {
  @ApiProperty({ pattern: idPattern('rf'), example: REFUND_EXAMPLE.id })
  id!: string;

  @ApiProperty({ enum: ['refund'], example: 'refund' })
  object!: 'refund';

  @ApiProperty({ pattern: idPattern('ord'), example: REFUND_EXAMPLE.order_id })
  order_id!: string;

  @ApiProperty({ type: 'string', nullable: true, example: REFUND_EXAMPLE.out_refund_no })
  out_refund_no!: string | null;

  @ApiProperty({ type: 'integer', minimum: 1, description: 'Integer minor units', example: 1000 })
  amount!: number;

  @ApiProperty({ pattern: '^[A-Z]{3}$', example: 'USD' })
  currency!: string;

  @ApiProperty({ enum: ['pending', 'succeeded', 'failed'], example: 'pending' })
  status!: RefundObject['status'];

  @ApiProperty({ type: 'string', nullable: true, example: null })
  reason!: string | null;

  @ApiProperty({ enum: ['test', 'live'], example: 'test' })
  environment!: RefundObject['environment'];

  @ApiProperty({ type: 'string', format: 'date-time', example: REFUND_EXAMPLE.created_at })
  created_at!: string;

  @nullableTime('When the refund webhook confirmed it')
  succeeded_at!: string | null;

  @nullableTime('When the refund webhook reported it failed (its amount is refundable again)')
  failed_at!: string | null;
}
