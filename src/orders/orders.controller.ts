import { Body, Controller, Get, Param, Post, Query, UseGuards } from '@nestjs/common';
import { ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ApiKeyGuard } from '../merchants/api-key.guard';
import { Auth, RequestAuth } from '../common/auth/request-auth';
import { Page, WithStatus } from '../common/http/api-response';
import { Idempotent } from '../idempotency/idempotent.decorator';
import { CreateOrderDto } from './dto/create-order.dto';
import { ListOrdersQuery } from './dto/list-orders.query';
import { OrderObject } from './order';
import { OrdersService } from './orders.service';

@ApiTags('orders')
@ApiSecurity('api-key')
@Controller('v1/orders')
@UseGuards(ApiKeyGuard)
export class OrdersController {
  constructor(private readonly orders: OrdersService) {}

  /** 201 with a new order; 200 with the existing one when out_trade_no was used before. */
  @Post()
  @Idempotent()
  async create(@Auth() auth: RequestAuth, @Body() body: CreateOrderDto): Promise<WithStatus<OrderObject>> {
    const { order, created } = await this.orders.create(auth, body);
    return created
      ? new WithStatus(201, order, { Location: `/v1/orders/${order.id}` })
      : new WithStatus(200, order);
  }

  /** `?out_trade_no=` finds one order (404 if none); otherwise a page, newest first. */
  @Get()
  async list(@Auth() auth: RequestAuth, @Query() query: ListOrdersQuery): Promise<OrderObject | Page<OrderObject>> {
    if (query.out_trade_no === undefined) return this.orders.list(auth, query);
    return this.orders.getByOutTradeNo(auth, query.out_trade_no);
  }

  @Get(':id')
  get(@Auth() auth: RequestAuth, @Param('id') id: string): Promise<OrderObject> {
    return this.orders.getById(auth, id);
  }

  @Post(':id/close')
  @Idempotent()
  async close(@Auth() auth: RequestAuth, @Param('id') id: string): Promise<WithStatus<OrderObject>> {
    return new WithStatus(200, await this.orders.close(auth, id));
  }
}
