import { Body, Controller, Param, Post, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminGuard } from '../common/auth/admin.guard';
import { WithStatus } from '../common/http/api-response';
import { ApiErrors, ApiStandardErrors } from '../common/openapi/api-errors.decorator';
import { ApiData } from '../common/openapi/api-success.decorator';
import { ApiKeysService, RevokedApiKeys, RolledApiKey } from './api-keys.service';
import { RevokeApiKeysDto, RollApiKeyDto } from './dto/api-key-actions.dto';
import { ApiKeyRevocationSchema, RolledApiKeySchema } from './merchant.schemas';

/** Admin: roll (with a grace period for the old key) and revoke a merchant's secret keys. */
@ApiStandardErrors('admin')
@ApiTags('admin')
@Controller('v1/admin/merchants/:id/api_keys')
@UseGuards(AdminGuard)
export class ApiKeysController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  /** A new key for the environment, shown once; the old ones stop after `expires_in` seconds. */
  @Post('roll')
  @ApiOperation({ operationId: 'rollApiKey', summary: "Roll a merchant's secret key of one environment" })
  @ApiData(200, RolledApiKeySchema, { description: 'The new key, shown only in this answer.' })
  @ApiErrors('parameter_invalid', 'parameter_missing', 'parameter_unknown', 'resource_missing')
  async roll(@Param('id') id: string, @Body() body: RollApiKeyDto): Promise<WithStatus<RolledApiKey>> {
    return new WithStatus(200, await this.apiKeys.roll(id, body.environment, body.expires_in ?? 0));
  }

  /** Every key of the environment stops at once, grace periods included; roll to get a new one. */
  @Post('revoke')
  @ApiOperation({ operationId: 'revokeApiKeys', summary: 'Revoke every secret key of one environment of a merchant' })
  @ApiData(200, ApiKeyRevocationSchema, { description: 'How many keys stopped working.' })
  @ApiErrors('parameter_invalid', 'parameter_missing', 'parameter_unknown', 'resource_missing')
  async revoke(@Param('id') id: string, @Body() body: RevokeApiKeysDto): Promise<WithStatus<RevokedApiKeys>> {
    return new WithStatus(200, await this.apiKeys.revoke(id, body.environment));
  }
}
