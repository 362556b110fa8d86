import { Module } from '@nestjs/common';
import { MerchantsModule } from '../merchants/merchants.module';
import { OrdersModule } from '../orders/orders.module';
import { RefundEventsHandler } from './refund-events.handler';
import { RefundsController } from './refunds.controller';
import { RefundsRepository } from './refunds.repository';
import { RefundsService } from './refunds.service';

@Module({
  imports: [MerchantsModule, OrdersModule],
  controllers: [RefundsController],
  providers: [RefundsRepository, RefundsService, RefundEventsHandler],
  exports: [RefundsService],
})
export class RefundsModule {}
