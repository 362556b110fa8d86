import { Global, Module, OnModuleInit } from '@nestjs/common';
import { Metrics } from '../common/metrics/metrics';
import { MerchantsModule } from '../merchants/merchants.module';
import { DeliveryQueue } from './delivery-queue';
import { DeliveryTask } from './delivery.task';
import { EventRecorder } from './event-recorder.service';
import { EventsController } from './events.controller';
import { EventsRepository } from './events.repository';
import { EventsService } from './events.service';
import { NotificationHttpClient } from './notification-http.client';
import { NotifyUrlPolicy } from './notify-url.policy';

/**
 * Merchant notifications (docs/notifications.md). Global: the services that change
 * orders and refunds record their events through EventRecorder and check notify_url
 * with NotifyUrlPolicy. Signing secrets belong to merchants/.
 */
@Global()
@Module({
  imports: [MerchantsModule],
  controllers: [EventsController],
  providers: [
    DeliveryQueue,
    DeliveryTask,
    EventRecorder,
    EventsRepository,
    EventsService,
    NotificationHttpClient,
    NotifyUrlPolicy,
  ],
  exports: [EventRecorder, NotifyUrlPolicy],
})
export class NotificationsModule implements OnModuleInit {
  constructor(
    private readonly metrics: Metrics,
    private readonly events: EventsRepository,
  ) {}

  /** /metrics reports the notification backlog, read at each scrape (docs/operations.md). */
  onModuleInit(): void {
    this.metrics.gaugesFromQuery(
      () => this.events.backlog(),
      [
        {
          name: 'notifications_pending',
          help: 'Notification events not yet delivered nor failed',
          pick: (backlog) => backlog.pending,
        },
        {
          name: 'notification_oldest_pending_age_seconds',
          help: 'Age of the oldest notification event still pending (0 when none is)',
          pick: (backlog) => backlog.oldestPendingAgeSeconds ?? 0,
        },
      ],
    );
  }
}
