import { Body, Param, Post } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import { AdminRoutes } from '../common/auth/admin-routes.decorator';
import { WithStatus } from '../common/http/api-response';
import { ApiErrors } from '../common/openapi/api-errors.decorator';
import { ApiData } from '../common/openapi/api-success.decorator';
import { ApiIdParam } from '../common/openapi/id-param';
import { ApiKeysService, RevokedApiKeys, RolledApiKey } from './api-keys.service';
import { RevokeApiKeysDto, RollApiKeyDto } from './dto/api-key-actions.dto';
import { ApiKeyRevocationSchema, RolledApiKeySchema } from './merchant.schemas';

/** Admin: roll (with a grace period for the old key) and revoke a merchant's secret keys. */
@AdminRoutes('merchants/:id/api_keys')
export class ApiKeysController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  /** A new key for the environment, shown once; the old ones stop after `expires_in` seconds. */
  @Post('roll')
  @ApiIdParam('mch')
  @ApiOperation({ operationId: 'rollApiKey', summary: "Roll a merchant's secret key of one environment" })
  @ApiData(200, RolledApiKeySchema, { description: 'The new key, shown only in this answer.' })
  @ApiErrors('parameter_invalid', 'parameter_missing', 'parameter_unknown', 'resource_missing')
  async roll(@Param('id') id: string, @Body() body: RollApiKeyDto): Promise<WithStatus<RolledApiKey>> {
    return new WithStatus(200, await this.apiKeys.roll(id, body.environment, body.expires_in ?? 0));
  }

  /** Every key of the environment stops at once, grace periods included; roll to get a new one. */
  @Post('revoke')
  @ApiIdParam('mch')
  @ApiOperation({ operationId: 'revokeApiKeys', summary: 'Revoke every secret key of one environment of a merchant' })
  @ApiData(200, ApiKeyRevocationSchema, { description: 'How many keys stopped working.' })
  @ApiErrors('parameter_invalid', 'parameter_missing', 'parameter_unknown', 'resource_missing')
  async revoke(@Param('id') id: string, @Body() body: RevokeApiKeysDto): Promise<WithStatus<RevokedApiKeys>> {
    return new WithStatus(200, await this.apiKeys.revoke(id, body.environment));
  }
}
