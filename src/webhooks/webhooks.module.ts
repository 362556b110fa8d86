import { Module } from '@nestjs/common';
import { PaymentEventsHandler } from './payment-events.handler';
import { WEBHOOK_EVENT_HANDLERS, WebhookEventHandler } from './webhook-event-handler';
import { WebhookReceiver } from './webhook-receiver.service';
import { WebhooksController } from './webhooks.controller';

@Module({
  controllers: [WebhooksController],
  providers: [
    PaymentEventsHandler,
    {
      provide: WEBHOOK_EVENT_HANDLERS,
      useFactory: (...handlers: WebhookEventHandler[]) => handlers,
      inject: [PaymentEventsHandler],
    },
    WebhookReceiver,
  ],
})
export class WebhooksModule {}
