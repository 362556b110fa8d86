import { Controller, Post, UseGuards } from '@nestjs/common';
import { ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ApiKeyGuard } from './api-key.guard';
import { Auth, RequestAuth } from '../common/auth/request-auth';
import { WithStatus } from '../common/http/api-response';
import { Idempotent } from '../idempotency/idempotent.decorator';
import { NotificationSecrets } from './notification-secrets.service';

@ApiTags('account')
@ApiSecurity('api-key')
@Controller('v1/account/notification_secret')
@UseGuards(ApiKeyGuard)
export class NotificationSecretController {
  constructor(private readonly secrets: NotificationSecrets) {}

  /** A new secret for the key's environment, shown once; the old one signs beside it for 24 hours. */
  @Post('roll')
  @Idempotent()
  async roll(@Auth() auth: RequestAuth) {
    const rolled = await this.secrets.roll(auth);
    return new WithStatus(200, {
      object: 'notification_secret',
      environment: auth.environment,
      secret: rolled.secret,
      previous_expires_at: rolled.previous_expires_at,
    });
  }
}
