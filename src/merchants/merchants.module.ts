import { Module } from '@nestjs/common';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { AccountController } from './account.controller';
import { AdminController } from './admin.controller';
import { ApiKeyAuthenticator } from './api-key-authenticator';
import { ApiKeysController } from './api-keys.controller';
import { ApiKeysRepository } from './api-keys.repository';
import { ApiKeysService } from './api-keys.service';
import { MerchantsRepository } from './merchants.repository';
import { MerchantsService } from './merchants.service';
import { NotificationSecretController } from './notification-secret.controller';
import { NotificationSecretsRepository } from './notification-secrets.repository';
import { NotificationSecrets } from './notification-secrets.service';

/**
 * Merchants, their API keys, their notification secrets and the API-key guard. Modules whose controllers use
 * ApiKeyGuard import this one: the guard is built in theirs from ApiKeyAuthenticator.
 */
@Module({
  imports: [IdempotencyModule],
  controllers: [AdminController, AccountController, ApiKeysController, NotificationSecretController],
  providers: [
    MerchantsRepository,
    ApiKeysRepository,
    ApiKeyAuthenticator,
    MerchantsService,
    ApiKeysService,
    NotificationSecrets,
    NotificationSecretsRepository,
  ],
  exports: [ApiKeyAuthenticator, MerchantsService, NotificationSecrets],
})
export class MerchantsModule {}
