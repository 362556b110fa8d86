import { Body, Controller, Param, Post, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { AdminGuard } from '../common/auth/admin.guard';
import { WithStatus } from '../common/http/api-response';
import { ApiKeysService, RevokedApiKeys, RolledApiKey } from './api-keys.service';
import { RevokeApiKeysDto, RollApiKeyDto } from './dto/api-key-actions.dto';

/** Admin: roll (with a grace period for the old key) and revoke a merchant's secret keys. */
@ApiTags('admin')
@ApiBearerAuth()
@Controller('v1/admin/merchants/:id/api_keys')
@UseGuards(AdminGuard)
export class ApiKeysController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  /** A new key for the environment, shown once; the old ones stop after `expires_in` seconds. */
  @Post('roll')
  async roll(@Param('id') id: string, @Body() body: RollApiKeyDto): Promise<WithStatus<RolledApiKey>> {
    return new WithStatus(200, await this.apiKeys.roll(id, body.environment, body.expires_in ?? 0));
  }

  /** Every key of the environment stops at once, grace periods included; roll to get a new one. */
  @Post('revoke')
  async revoke(@Param('id') id: string, @Body() body: RevokeApiKeysDto): Promise<WithStatus<RevokedApiKeys>> {
    return new WithStatus(200, await this.apiKeys.revoke(id, body.environment));
  }
}
