import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { WebhookEventsRepository } from './webhook-events.repository';
import { WebhookReceiverService } from './webhook-receiver.service';
import { WebhooksController } from './webhooks.controller';

/** Receiving provider webhooks; the features contribute handlers with @HandlesWebhookEvents(). */
@Module({
  imports: [DiscoveryModule],
  controllers: [WebhooksController],
  providers: [WebhookEventsRepository, WebhookReceiverService],
  exports: [WebhookReceiverService],
})
export class WebhooksModule {}
