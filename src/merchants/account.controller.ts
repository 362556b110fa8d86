import { Controller, Get, UseGuards } from '@nestjs/common';
import { ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ApiKeyGuard } from './api-key.guard';
import { Auth, RequestAuth } from '../common/auth/request-auth';
import { MerchantsService } from './merchants.service';

/** Lets a merchant check which account and environment a key belongs to. */
@ApiTags('account')
@ApiSecurity('api-key')
@Controller('v1/account')
@UseGuards(ApiKeyGuard)
export class AccountController {
  constructor(private readonly merchants: MerchantsService) {}

  @Get()
  get(@Auth() auth: RequestAuth) {
    return this.merchants.getAccount(auth);
  }
}
