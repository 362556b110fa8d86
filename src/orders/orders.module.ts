import { Module } from '@nestjs/common';
import { MerchantsModule } from '../merchants/merchants.module';
import { FulfillmentsRepository } from './fulfillments.repository';
import { OrdersController } from './orders.controller';
import { OrdersRepository } from './orders.repository';
import { OrdersService } from './orders.service';
import { PaymentEventsHandler } from './payment-events.handler';

@Module({
  imports: [MerchantsModule],
  controllers: [OrdersController],
  providers: [OrdersRepository, FulfillmentsRepository, OrdersService, PaymentEventsHandler],
  exports: [OrdersRepository, OrdersService],
})
export class OrdersModule {}
