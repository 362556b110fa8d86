import { Module } from '@nestjs/common';
import { RefundEventsHandler } from './refund-events.handler';
import { RefundsController } from './refunds.controller';
import { RefundsService } from './refunds.service';

@Module({
  controllers: [RefundsController],
  providers: [RefundsService, RefundEventsHandler],
  exports: [RefundEventsHandler],
})
export class RefundsModule {}
