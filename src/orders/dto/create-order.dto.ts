import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, IsString, Matches } from 'class-validator';
import { IsMinorUnits } from '../../common/validation/minor-units';
import {
  AsSent,
  Chars,
  IsCallbackUrl,
  IsCurrencyCode,
  IsMetadata,
  Optional,
  REFERENCE_PATTERN,
  URL_AFTER_SCHEME_PATTERN,
  URL_REST_PATTERN,
} from '../../common/validation/validators';
import { IsNotifyUrl, NOTIFY_URL_SCHEMA } from '../../notifications/notify-url.validator';

export const MAX_AMOUNT = 100_000_000_000;

/** What IsCallbackUrl accepts, as far as a schema can say it. */
const CALLBACK_URL = {
  type: 'string',
  format: 'uri',
  maxLength: 2048,
  // Case-insensitive, as the server reads scheme and host (RFC 3986 §3.1, §3.2.2).
  pattern:
    `^[Hh][Tt][Tt][Pp][Ss]://${URL_AFTER_SCHEME_PATTERN}|` +
    `^[Hh][Tt][Tt][Pp]://[Ll][Oo][Cc][Aa][Ll][Hh][Oo][Ss][Tt](:[0-9]*)?${URL_REST_PATTERN}`,
  description: 'Absolute https:// URL (or http://localhost), at most 2048 characters',
} as const;

export class CreateOrderDto {
  @ApiProperty({ example: 'ORDER_20260921_0001', pattern: REFERENCE_PATTERN.source, minLength: 1, maxLength: 64 })
  @IsDefined()
  @IsString()
  @Matches(REFERENCE_PATTERN, { message: 'out_trade_no must be 1-64 characters of A-Z, a-z, 0-9, _ and -' })
  out_trade_no!: string;

  @ApiProperty({ type: 'integer', example: 2990, minimum: 1, maximum: MAX_AMOUNT, description: 'Integer minor units' })
  @IsDefined()
  @IsMinorUnits(1, MAX_AMOUNT)
  amount!: number;

  @ApiProperty({
    example: 'USD',
    pattern: '^[A-Z]{3}$',
    description: 'ISO 4217 alpha code, upper case (one ICU knows)',
  })
  @IsDefined()
  @IsCurrencyCode()
  currency!: string;

  @ApiProperty({ example: 'Annual plan', minLength: 1, maxLength: 256 })
  @IsDefined()
  @IsString()
  @Chars(1, 256)
  subject!: string;

  @ApiPropertyOptional({ type: 'string', maxLength: 1000, example: 'Twelve months of the Pro plan' })
  @Optional()
  @IsString()
  @Chars(0, 1000)
  description?: string;

  @ApiPropertyOptional({ ...NOTIFY_URL_SCHEMA, example: 'https://merchant.example/kukopay/notify' })
  @Optional()
  @IsNotifyUrl()
  notify_url?: string;

  @ApiPropertyOptional({ ...CALLBACK_URL, example: 'https://merchant.example/thanks' })
  @Optional()
  @IsCallbackUrl()
  return_url?: string;

  @ApiPropertyOptional({
    example: { customer: 'c_42' },
    type: 'object',
    maxProperties: 20,
    // JSON Schema keyword that @nestjs/swagger's types do not know; it is passed through.
    ...({ propertyNames: { minLength: 1, maxLength: 40 } } as object),
    additionalProperties: { type: 'string', maxLength: 500 },
  })
  @Optional()
  @IsMetadata()
  @AsSent()
  metadata?: Record<string, string>;
}
