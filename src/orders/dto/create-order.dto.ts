import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, IsInt, IsString, Length, Matches, Max, MaxLength, Min } from 'class-validator';
import { IsCallbackUrl, IsCurrencyCode, IsMetadata, Optional, REFERENCE_PATTERN } from '../../common/validation/validators';
import { IsNotifyUrl } from '../../notifications/notify-url.validator';

export const MAX_AMOUNT = 100_000_000_000;

export class CreateOrderDto {
  @ApiProperty({ example: 'ORDER_20260921_0001', pattern: REFERENCE_PATTERN.source })
  @IsDefined()
  @IsString()
  @Matches(REFERENCE_PATTERN, { message: 'out_trade_no must be 1-64 characters of A-Z, a-z, 0-9, _ and -' })
  out_trade_no!: string;

  @ApiProperty({ example: 2990, minimum: 1, maximum: MAX_AMOUNT, description: 'Integer minor units' })
  @IsDefined()
  @IsInt({ message: 'amount must be an integer number of minor units' })
  @Min(1)
  @Max(MAX_AMOUNT)
  amount!: number;

  @ApiProperty({ example: 'USD', description: 'ISO 4217 alpha code, upper case' })
  @IsDefined()
  @IsCurrencyCode()
  currency!: string;

  @ApiProperty({ example: 'Annual plan', minLength: 1, maxLength: 256 })
  @IsDefined()
  @IsString()
  @Length(1, 256)
  subject!: string;

  @ApiPropertyOptional({ maxLength: 1000 })
  @Optional()
  @IsString()
  @MaxLength(1000)
  description?: string;

  @ApiPropertyOptional({ example: 'https://merchant.example/kukopay/notify' })
  @Optional()
  @IsNotifyUrl()
  notify_url?: string;

  @ApiPropertyOptional({ example: 'https://merchant.example/thanks' })
  @Optional()
  @IsCallbackUrl()
  return_url?: string;

  @ApiPropertyOptional({ example: { customer: 'c_42' }, type: 'object', additionalProperties: { type: 'string' } })
  @Optional()
  @IsMetadata()
  metadata?: Record<string, string>;
}
