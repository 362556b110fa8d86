import { Controller, Post, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiKeyGuard } from './api-key.guard';
import { Auth, RequestAuth } from '../common/auth/request-auth';
import { WithStatus } from '../common/http/api-response';
import { ApiStandardErrors } from '../common/openapi/api-errors.decorator';
import { ApiData } from '../common/openapi/api-success.decorator';
import { Idempotent } from '../idempotency/idempotent.decorator';
import { NotificationSecretSchema } from './notification-secret.schema';
import { NotificationSecrets } from './notification-secrets.service';
import { TakesNoBody } from '../common/http/takes-no-body';

@ApiStandardErrors('api-key')
@ApiTags('account')
@Controller('v1/account/notification_secret')
@UseGuards(ApiKeyGuard)
export class NotificationSecretController {
  constructor(private readonly secrets: NotificationSecrets) {}

  /** A new secret for the key's environment, shown once; the old one signs beside it for 24 hours. */
  @Post('roll')
  @TakesNoBody()
  @Idempotent({ answerHoldsSecret: true })
  @ApiOperation({
    operationId: 'rollNotificationSecret',
    summary: "Roll the notification secret of the key's environment",
    description: 'The previous secret keeps signing notifications beside the new one for 24 hours.',
  })
  @ApiData(200, NotificationSecretSchema, { description: 'The new secret, shown only in this answer.' })
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
