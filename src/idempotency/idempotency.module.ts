import { Module } from '@nestjs/common';
import { Db } from '../database/db';
import { IdempotencyKeysRepository } from './idempotency-keys.repository';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import { IdempotencyPurgeScheduler } from './idempotency-purge.scheduler';
import { IdempotencyPurgeService } from './idempotency-purge.service';

@Module({
  providers: [
    IdempotencyKeysRepository,
    IdempotencyInterceptor,
    // A plain class (no decorator), so that purge.cli.ts can run the very same code on a bare data source.
    {
      provide: IdempotencyPurgeService,
      inject: [Db, IdempotencyKeysRepository],
      useFactory: (db: Db, keys: IdempotencyKeysRepository) => new IdempotencyPurgeService(db, keys),
    },
    IdempotencyPurgeScheduler,
  ],
  exports: [IdempotencyKeysRepository, IdempotencyInterceptor, IdempotencyPurgeService],
})
export class IdempotencyModule {}
