import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Matches } from 'class-validator';
import { PageQuery } from '../../common/pagination';
import { EVENT_TYPES, EventType } from '../event';
import { idPattern } from '../../common/openapi/id-param';

export class ListEventsQuery extends PageQuery {
  @ApiPropertyOptional({ enum: EVENT_TYPES })
  @IsOptional()
  @IsIn(EVENT_TYPES, { message: `type must be one of ${EVENT_TYPES.join(', ')}` })
  type?: EventType;

  @ApiPropertyOptional({ description: "The order's events, its refunds' included", pattern: idPattern('ord') })
  @IsOptional()
  @IsString()
  @Matches(new RegExp(idPattern('ord')), { message: 'order_id must be an order id (ord_…)' })
  order_id?: string;
}
