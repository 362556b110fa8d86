import { Module } from '@nestjs/common';
import { MerchantsModule } from '../merchants/merchants.module';
import { OrdersModule } from '../orders/orders.module';
import { RefundsModule } from '../refunds/refunds.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { TestHelpersController } from './test-helpers.controller';

/** Sandbox helpers that settle orders and refunds through the webhook receiver (docs/notifications.md). */
@Module({
  imports: [MerchantsModule, OrdersModule, RefundsModule, WebhooksModule],
  controllers: [TestHelpersController],
})
export class TestHelpersModule {}
