import { Global, Module } from '@nestjs/common';
import { DeliveryQueue } from './delivery-queue';
import { DeliveryTask } from './delivery.task';
import { EventRecorder } from './event-recorder.service';
import { EventsController } from './events.controller';
import { EventsRepository } from './events.repository';
import { EventsService } from './events.service';
import { NotificationHttpClient } from './notification-http.client';
import { NotificationSecretController } from './notification-secret.controller';
import { NotificationSecretsRepository } from './notification-secrets.repository';
import { NotificationSecrets } from './notification-secrets.service';
import { NotifyUrlPolicy } from './notify-url.policy';

/**
 * Merchant notifications (docs/notifications.md). Global: the services that change
 * orders and refunds record their events through EventRecorder, and merchant creation
 * gets its secrets from NotificationSecrets.
 */
@Global()
@Module({
  controllers: [EventsController, NotificationSecretController],
  providers: [
    DeliveryQueue,
    DeliveryTask,
    EventRecorder,
    EventsRepository,
    EventsService,
    NotificationHttpClient,
    NotificationSecrets,
    NotificationSecretsRepository,
    NotifyUrlPolicy,
  ],
  exports: [EventRecorder, NotificationSecrets, NotifyUrlPolicy],
})
export class NotificationsModule {}
