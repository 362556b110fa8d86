import { Module } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import { IdempotencyPurgeScheduler } from './idempotency-purge.scheduler';
import { IdempotencyPurgeService } from './idempotency-purge.service';
import { IdempotencyStore } from './idempotency.store';

@Module({
  providers: [
    IdempotencyStore,
    IdempotencyInterceptor,
    // A plain class, so that purge.cli.ts runs the very same code on a bare DataSource.
    {
      provide: IdempotencyPurgeService,
      inject: [DataSource],
      useFactory: (dataSource: DataSource) => new IdempotencyPurgeService(dataSource),
    },
    IdempotencyPurgeScheduler,
  ],
  exports: [IdempotencyInterceptor, IdempotencyPurgeService],
})
export class IdempotencyModule {}
