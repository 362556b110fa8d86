import { Module } from '@nestjs/common';
import { AccountController } from './account.controller';
import { AdminController } from './admin.controller';
import { MerchantsService } from './merchants.service';

@Module({
  controllers: [AdminController, AccountController],
  providers: [MerchantsService],
  exports: [MerchantsService],
})
export class MerchantsModule {}
