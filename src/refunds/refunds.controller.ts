import { Body, Controller, Get, Param, Post, Query, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiKeyGuard } from '../merchants/api-key.guard';
import { Auth, RequestAuth } from '../common/auth/request-auth';
import { Page, WithStatus } from '../common/http/api-response';
import { PageQuery } from '../common/pagination';
import { ApiErrors, ApiStandardErrors } from '../common/openapi/api-errors.decorator';
import { ApiData, ApiPage } from '../common/openapi/api-success.decorator';
import { location } from '../common/openapi/headers';
import { ApiIdParam } from '../common/openapi/id-param';
import { Idempotent } from '../idempotency/idempotent.decorator';
import { CreateRefundDto } from './dto/create-refund.dto';
import { FindRefundQuery } from './dto/find-refund.query';
import { RefundObject } from './refund';
import { REFUND_EXAMPLE, RefundSchema } from './refund.schema';
import { RefundsService } from './refunds.service';

@ApiStandardErrors('api-key')
@ApiTags('refunds')
@Controller()
@UseGuards(ApiKeyGuard)
export class RefundsController {
  constructor(private readonly refunds: RefundsService) {}

  /** 201 with a new refund; 200 with the existing one when out_refund_no was used before. */
  @Post('v1/refunds')
  @Idempotent()
  @ApiOperation({ operationId: 'createRefund', summary: 'Refund part or all of a paid order' })
  @ApiData(201, RefundSchema, {
    description: 'Created, pending until the provider settles it.',
    headers: { Location: location('/v1/refunds/rf_0d4b3c2a19f8e7d6c5b4a39281706f5e') },
    example: REFUND_EXAMPLE,
  })
  @ApiData(200, RefundSchema, { description: 'The refund created earlier with this out_refund_no, unchanged.' })
  @ApiErrors('parameter_invalid', 'parameter_missing', 'parameter_unknown', 'resource_missing')
  @ApiErrors('order_not_paid', 'refund_amount_exceeded')
  async create(@Auth() auth: RequestAuth, @Body() body: CreateRefundDto): Promise<WithStatus<RefundObject>> {
    const { refund, created } = await this.refunds.create(auth, body);
    return created
      ? new WithStatus(201, refund, { Location: `/v1/refunds/${refund.id}` })
      : new WithStatus(200, refund);
  }

  @Get('v1/refunds')
  @ApiOperation({ operationId: 'findRefund', summary: 'Find a refund by out_refund_no' })
  @ApiData(200, RefundSchema, { description: 'The refund.', example: REFUND_EXAMPLE })
  @ApiErrors('parameter_invalid', 'parameter_missing', 'parameter_unknown', 'resource_missing')
  find(@Auth() auth: RequestAuth, @Query() query: FindRefundQuery): Promise<RefundObject> {
    return this.refunds.getByOutRefundNo(auth, query.out_refund_no);
  }

  @Get('v1/refunds/:id')
  @ApiIdParam('rf')
  @ApiOperation({ operationId: 'retrieveRefund', summary: 'Retrieve a refund' })
  @ApiData(200, RefundSchema, { description: 'The refund.', example: REFUND_EXAMPLE })
  @ApiErrors('resource_missing')
  get(@Auth() auth: RequestAuth, @Param('id') id: string): Promise<RefundObject> {
    return this.refunds.getById(auth, id);
  }

  @Get('v1/orders/:id/refunds')
  @ApiIdParam('ord')
  @ApiOperation({ operationId: 'listOrderRefunds', summary: "List an order's refunds", tags: ['orders'] })
  @ApiPage(RefundSchema, { description: 'A page of refunds, newest first.', example: REFUND_EXAMPLE })
  @ApiErrors('parameter_invalid', 'parameter_unknown', 'resource_missing')
  listForOrder(
    @Auth() auth: RequestAuth,
    @Param('id') id: string,
    @Query() page: PageQuery,
  ): Promise<Page<RefundObject>> {
    return this.refunds.listForOrder(auth, id, page);
  }
}
