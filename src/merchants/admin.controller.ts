import { Body, Controller, Post, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminGuard } from '../common/auth/admin.guard';
import { ApiErrors, ApiStandardErrors } from '../common/openapi/api-errors.decorator';
import { ApiData } from '../common/openapi/api-success.decorator';
import { CreateMerchantDto } from './dto/create-merchant.dto';
import { CreatedMerchantSchema } from './merchant.schemas';
import { CreatedMerchant, MerchantsService } from './merchants.service';

@ApiStandardErrors('admin')
@ApiTags('admin')
@Controller('v1/admin')
@UseGuards(AdminGuard)
export class AdminController {
  constructor(private readonly merchants: MerchantsService) {}

  @Post('merchants')
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
