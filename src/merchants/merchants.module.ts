import { Module } from '@nestjs/common';
import { AccountController } from './account.controller';
import { AdminController } from './admin.controller';
import { ApiKeysController } from './api-keys.controller';
import { ApiKeysRepository } from './api-keys.repository';
import { ApiKeysService } from './api-keys.service';
import { MerchantsService } from './merchants.service';

@Module({
  controllers: [AdminController, AccountController, ApiKeysController],
  providers: [MerchantsService, ApiKeysService, ApiKeysRepository],
  exports: [MerchantsService],
})
export class MerchantsModule {}
