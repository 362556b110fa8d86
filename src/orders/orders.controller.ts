import { Body, Controller, Get, Param, Post, Query, UseGuards } from '@nestjs/common';
import { DomainError } from '../common/errors/domain-error';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiKeyGuard } from '../merchants/api-key.guard';
import { Auth, RequestAuth } from '../common/auth/request-auth';
import { Page, WithStatus } from '../common/http/api-response';
import { ApiErrors, ApiStandardErrors } from '../common/openapi/api-errors.decorator';
import { ApiData, ApiSuccess, dataOf, pageOf } from '../common/openapi/api-success.decorator';
import { location } from '../common/openapi/headers';
import { ApiIdParam } from '../common/openapi/id-param';
import { Idempotent } from '../idempotency/idempotent.decorator';
import { CreateOrderDto } from './dto/create-order.dto';
import { ListOrdersQuery } from './dto/list-orders.query';
import { OrderObject } from './order';
import { ORDER_EXAMPLE, OrderSchema } from './order.schema';
import { OrdersService } from './orders.service';
import { TakesNoBody } from '../common/http/takes-no-body';

@ApiStandardErrors('api-key')
@ApiTags('orders')
@Controller('v1/orders')
@UseGuards(ApiKeyGuard)
export class OrdersController {
  constructor(private readonly orders: OrdersService) {}

  /** 201 with a new order; 200 with the existing one when out_trade_no was used before. */
  @Post()
  @Idempotent()
  @ApiOperation({ operationId: 'createOrder', summary: 'Create an order' })
  @ApiData(201, OrderSchema, {
    description: 'Created.',
    headers: { Location: location('/v1/orders/ord_89ec5e4902673c9c25cbd9b6704be3d1') },
    example: ORDER_EXAMPLE,
  })
  @ApiData(200, OrderSchema, { description: 'The order created earlier with this out_trade_no, unchanged.' })
  @ApiErrors('parameter_invalid', 'parameter_missing', 'parameter_unknown')
  async create(@Auth() auth: RequestAuth, @Body() body: CreateOrderDto): Promise<WithStatus<OrderObject>> {
    const { order, created } = await this.orders.create(auth, body);
    return created ? new WithStatus(201, order, { Location: `/v1/orders/${order.id}` }) : new WithStatus(200, order);
  }

  /** `?out_trade_no=` finds one order (404 if none); otherwise a page, newest first. */
  @Get()
  @ApiOperation({
    operationId: 'listOrders',
    summary: 'List orders, or find one by out_trade_no',
    description:
      'With `out_trade_no`: that one order (404 if none), and neither `limit` nor `starting_after` may be sent with it (400 `parameter_invalid`). Otherwise a page, newest first.',
  })
  @ApiSuccess(
    200,
    {
      description: 'One order (with out_trade_no) or a page of orders.',
      schema: { oneOf: [dataOf(OrderSchema), pageOf(OrderSchema)] },
    },
    [OrderSchema],
  )
  @ApiErrors('parameter_invalid', 'parameter_unknown', 'resource_missing')
  async list(@Auth() auth: RequestAuth, @Query() query: ListOrdersQuery): Promise<OrderObject | Page<OrderObject>> {
    if (query.out_trade_no === undefined) return this.orders.list(auth, query);
    // One order, not a page: a page's parameters beside it would be silently ignored.
    for (const name of ['limit', 'starting_after'] as const) {
      if (query[name] !== undefined) {
        throw new DomainError('parameter_invalid', `${name} cannot be combined with out_trade_no.`, name);
      }
    }
    return this.orders.getByOutTradeNo(auth, query.out_trade_no);
  }

  @Get(':id')
  @ApiIdParam('ord')
  @ApiOperation({ operationId: 'retrieveOrder', summary: 'Retrieve an order' })
  @ApiData(200, OrderSchema, { description: 'The order.', example: ORDER_EXAMPLE })
  @ApiErrors('resource_missing')
  get(@Auth() auth: RequestAuth, @Param('id') id: string): Promise<OrderObject> {
    return this.orders.getById(auth, id);
  }

  @Post(':id/close')
  @ApiIdParam('ord')
  @TakesNoBody()
  @Idempotent()
  @ApiOperation({ operationId: 'closeOrder', summary: 'Close a pending order' })
  @ApiData(200, OrderSchema, {
    description: 'The closed order.',
    example: { ...ORDER_EXAMPLE, status: 'closed', closed_at: '2026-09-21T09:00:00.000Z' },
  })
  @ApiErrors('resource_missing', 'order_not_closable')
  async close(@Auth() auth: RequestAuth, @Param('id') id: string): Promise<WithStatus<OrderObject>> {
    return new WithStatus(200, await this.orders.close(auth, id));
  }
}
