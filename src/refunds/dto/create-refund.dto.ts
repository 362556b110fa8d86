import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsString, Matches } from 'class-validator';
import { ApiSchemaRules } from '../../common/openapi/schema-rules';
import { IsMinorUnits } from '../../common/validation/minor-units';
import { Chars, Optional, REFERENCE_PATTERN } from '../../common/validation/validators';
import { IsNotifyUrl, NOTIFY_URL_SCHEMA } from '../../notifications/notify-url.validator';
import { idPattern } from '../../common/openapi/id-param';

/**
 * A refund is bounded only by what its order has left, so any larger amount is
 * refund_amount_exceeded (docs/refunds.md); the range refuses only what JSON cannot carry
 * exactly.
 */
const MAX_REFUND_AMOUNT = Number.MAX_SAFE_INTEGER;

/** Exactly one of order_id and out_trade_no names the order (checked by the service). */
@ApiSchemaRules({
  oneOf: [{ required: ['order_id'] }, { required: ['out_trade_no'] }],
  description: 'Name the order with exactly one of order_id and out_trade_no.',
})
export class CreateRefundDto {
  @ApiPropertyOptional({ example: 'ord_89ec5e4902673c9c25cbd9b6704be3d1', pattern: idPattern('ord') })
  @Optional()
  @IsString()
  @Matches(new RegExp(idPattern('ord')), { message: 'order_id must be an order id (ord_…)' })
  order_id?: string;

  @ApiPropertyOptional({
    example: 'ORDER_20260921_0001',
    pattern: REFERENCE_PATTERN.source,
    minLength: 1,
    maxLength: 64,
  })
  @Optional()
  @IsString()
  @Matches(REFERENCE_PATTERN, { message: 'out_trade_no must be 1-64 characters of A-Z, a-z, 0-9, _ and -' })
  out_trade_no?: string;

  @ApiPropertyOptional({
    type: 'integer',
    example: 1000,
    minimum: 1,
    maximum: MAX_REFUND_AMOUNT,
    description:
      'Integer minor units; default: all that is still refundable. More than that is 400 refund_amount_exceeded',
  })
  @Optional()
  @IsMinorUnits(1, MAX_REFUND_AMOUNT)
  amount?: number;

  @ApiPropertyOptional({
    example: 'REFUND_20260922_0001',
    pattern: REFERENCE_PATTERN.source,
    minLength: 1,
    maxLength: 64,
    description: 'Required in live, optional in test',
  })
  @Optional()
  @IsString()
  @Matches(REFERENCE_PATTERN, { message: 'out_refund_no must be 1-64 characters of A-Z, a-z, 0-9, _ and -' })
  out_refund_no?: string;

  @ApiPropertyOptional({ type: 'string', maxLength: 500, example: 'Customer asked' })
  @Optional()
  @IsString()
  @Chars(0, 500)
  reason?: string;

  @ApiPropertyOptional({
    ...NOTIFY_URL_SCHEMA,
    description: `Where this refund's notifications go; default: its order's notify_url. ${NOTIFY_URL_SCHEMA.description}`,
    example: 'https://merchant.example/kukopay/notify',
  })
  @Optional()
  @IsNotifyUrl()
  notify_url?: string;
}
