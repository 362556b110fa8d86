import { Body, Controller, Get, Param, Post, Query, UseGuards } from '@nestjs/common';
import { ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ApiKeyGuard } from '../merchants/api-key.guard';
import { Auth, RequestAuth } from '../common/auth/request-auth';
import { Page, WithStatus } from '../common/http/api-response';
import { PageQuery } from '../common/pagination';
import { Idempotent } from '../idempotency/idempotent.decorator';
import { CreateRefundDto } from './dto/create-refund.dto';
import { FindRefundQuery } from './dto/find-refund.query';
import { RefundObject } from './refund';
import { RefundsService } from './refunds.service';

@ApiTags('refunds')
@ApiSecurity('api-key')
@Controller()
@UseGuards(ApiKeyGuard)
export class RefundsController {
  constructor(private readonly refunds: RefundsService) {}

  /** 201 with a new refund; 200 with the existing one when out_refund_no was used before. */
  @Post('v1/refunds')
  @Idempotent()
  async create(@Auth() auth: RequestAuth, @Body() body: CreateRefundDto): Promise<WithStatus<RefundObject>> {
    const { refund, created } = await this.refunds.create(auth, body);
    return created
      ? new WithStatus(201, refund, { Location: `/v1/refunds/${refund.id}` })
      : new WithStatus(200, refund);
  }

  @Get('v1/refunds')
  find(@Auth() auth: RequestAuth, @Query() query: FindRefundQuery): Promise<RefundObject> {
    return this.refunds.getByOutRefundNo(auth, query.out_refund_no);
  }

  @Get('v1/refunds/:id')
  get(@Auth() auth: RequestAuth, @Param('id') id: string): Promise<RefundObject> {
    return this.refunds.getById(auth, id);
  }

  @Get('v1/orders/:id/refunds')
  listForOrder(@Auth() auth: RequestAuth, @Param('id') id: string, @Query() page: PageQuery): Promise<Page<RefundObject>> {
    return this.refunds.listForOrder(auth, id, page);
  }
}
