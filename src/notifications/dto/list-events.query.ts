import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Matches } from 'class-validator';
import { PageQuery } from '../../common/pagination';
import { EVENT_TYPES, EventType } from '../event';

export class ListEventsQuery extends PageQuery {
  @ApiPropertyOptional({ enum: EVENT_TYPES })
  @IsOptional()
  @IsIn(EVENT_TYPES, { message: `type must be one of ${EVENT_TYPES.join(', ')}` })
  type?: EventType;

  @ApiPropertyOptional({ description: "The order's events, its refunds' included", pattern: '^ord_[0-9a-f]{32}$' })
  @IsOptional()
  @IsString()
  @Matches(/^ord_[0-9a-f]{32}$/, { message: 'order_id must be an order id (ord_…)' })
  order_id?: string;
}
