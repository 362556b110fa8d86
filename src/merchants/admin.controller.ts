import { Body, Post } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import { AdminRoutes } from '../common/auth/admin-routes.decorator';
import { ApiErrors } from '../common/openapi/api-errors.decorator';
import { ApiData } from '../common/openapi/api-success.decorator';
import { CreateMerchantDto } from './dto/create-merchant.dto';
import { CreatedMerchantSchema } from './merchant.schemas';
import { CreatedMerchant, MerchantsService } from './merchants.service';

@AdminRoutes('merchants')
export class AdminController {
  constructor(private readonly merchants: MerchantsService) {}

  @Post()
  @ApiOperation({
    operationId: 'createMerchant',
    summary: 'Create a merchant and its API keys',
    description: 'Answers 404 route_not_found when the deployment has no ADMIN_TOKEN.',
  })
  @ApiData(201, CreatedMerchantSchema, { description: 'Created; the keys are shown only in this answer.' })
  @ApiErrors('parameter_invalid', 'parameter_missing', 'parameter_unknown')
  createMerchant(@Body() body: CreateMerchantDto): Promise<CreatedMerchant> {
    return this.merchants.create(body.name);
  }
}
