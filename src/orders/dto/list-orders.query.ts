import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { REFERENCE_PATTERN } from '../../common/validation/validators';

export class ListOrdersQuery {
  @ApiPropertyOptional({ description: 'Find the order with this merchant order number' })
  @IsOptional()
  @IsString()
  @Matches(REFERENCE_PATTERN, { message: 'out_trade_no must be 1-64 characters of A-Z, a-z, 0-9, _ and -' })
  out_trade_no?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: 100, default: 10 })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'limit must be an integer from 1 to 100' })
  @Min(1, { message: 'limit must be an integer from 1 to 100' })
  @Max(100, { message: 'limit must be an integer from 1 to 100' })
  limit?: number;

  @ApiPropertyOptional({ description: 'An order id: list the orders created before it' })
  @IsOptional()
  @IsString()
  @Matches(/^ord_[0-9a-f]{32}$/, { message: 'starting_after must be an order id' })
  starting_after?: string;
}
