import { Controller, Get, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiKeyGuard } from './api-key.guard';
import { Auth, RequestAuth } from '../common/auth/request-auth';
import { ApiStandardErrors } from '../common/openapi/api-errors.decorator';
import { ApiData } from '../common/openapi/api-success.decorator';
import { AccountSchema } from './merchant.schemas';
import { MerchantsService } from './merchants.service';

/** Lets a merchant check which account and environment a key belongs to. */
@ApiStandardErrors('api-key')
@ApiTags('account')
@Controller('v1/account')
@UseGuards(ApiKeyGuard)
export class AccountController {
  constructor(private readonly merchants: MerchantsService) {}

  @Get()
  @ApiOperation({ operationId: 'retrieveAccount', summary: 'Retrieve the account of the API key' })
  @ApiData(200, AccountSchema, { description: 'The merchant and the environment of the key.' })
  get(@Auth() auth: RequestAuth) {
    return this.merchants.getAccount(auth);
  }
}
