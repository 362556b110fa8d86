import { Module } from '@nestjs/common';
import { RefundEventsHandler } from '../refunds/refund-events.handler';
import { RefundsModule } from '../refunds/refunds.module';
import { PaymentEventsHandler } from './payment-events.handler';
import { WEBHOOK_EVENT_HANDLERS, WebhookEventHandler } from './webhook-event-handler';
import { WebhookReceiver } from './webhook-receiver.service';
import { WebhooksController } from './webhooks.controller';

@Module({
  imports: [RefundsModule],
  controllers: [WebhooksController],
  providers: [
    PaymentEventsHandler,
    {
      provide: WEBHOOK_EVENT_HANDLERS,
      useFactory: (...handlers: WebhookEventHandler[]) => handlers,
      inject: [PaymentEventsHandler, RefundEventsHandler],
    },
    WebhookReceiver,
  ],
  exports: [WebhookReceiver],
})
export class WebhooksModule {}
