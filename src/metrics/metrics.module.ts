import { Global, Module } from '@nestjs/common';
import { Db } from '../database/db';
import { Metrics } from '../common/metrics/metrics';
import { oldestExpiredKeyAgeSeconds } from './metrics.repository';

/** The application's metrics; GET /metrics and the request hook are installed by createApp. */
@Global()
@Module({
  providers: [
    {
      provide: Metrics,
      inject: [Db],
      useFactory: (db: Db) => {
        const metrics = new Metrics(() => db.poolStats());
        metrics.gaugesFromQuery(
          () => oldestExpiredKeyAgeSeconds(db),
          [
            {
              name: 'idempotency_oldest_expired_key_age_seconds',
              help: 'How long the oldest expired idempotency key has waited for the purge (0: none waiting)',
              pick: (age) => age,
            },
          ],
        );
        return metrics;
      },
    },
  ],
  exports: [Metrics],
})
export class MetricsModule {}
