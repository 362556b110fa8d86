import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches } from 'class-validator';
import { PageQuery } from '../../common/pagination';
import { REFERENCE_PATTERN } from '../../common/validation/validators';

export class ListOrdersQuery extends PageQuery {
  @ApiPropertyOptional({
    description: 'Find the order with this merchant order number',
    pattern: REFERENCE_PATTERN.source,
    minLength: 1,
    maxLength: 64,
  })
  @IsOptional()
  @IsString()
  @Matches(REFERENCE_PATTERN, { message: 'out_trade_no must be 1-64 characters of A-Z, a-z, 0-9, _ and -' })
  out_trade_no?: string;
}
