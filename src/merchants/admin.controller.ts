import { Body, Controller, Post, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { AdminGuard } from '../common/auth/admin.guard';
import { CreateMerchantDto } from './dto/create-merchant.dto';
import { CreatedMerchant, MerchantsService } from './merchants.service';

@ApiTags('admin')
@ApiBearerAuth()
@Controller('v1/admin')
@UseGuards(AdminGuard)
export class AdminController {
  constructor(private readonly merchants: MerchantsService) {}

  @Post('merchants')
  createMerchant(@Body() body: CreateMerchantDto): Promise<CreatedMerchant> {
    return this.merchants.create(body.name);
  }
}
