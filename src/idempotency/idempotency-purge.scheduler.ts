import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { CronJob } from 'cron';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { Metrics } from '../common/metrics/metrics';
import { describePurge, purgeFailureDetail, IdempotencyPurgeService, PurgeFailed } from './idempotency-purge.service';

/** The one name the job is registered under; the registry refuses a second. */
export const PURGE_JOB = 'idempotency-purge';

/**
 * Runs the purge on IDEMPOTENCY_PURGE_CRON. Registered at run time rather than with
 * @Cron because the schedule comes from the validated config and may be "off" (nothing
 * registered). Every instance schedules it; the purge's lock lets one of them work.
 */
@Injectable()
export class IdempotencyPurgeScheduler implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(IdempotencyPurgeScheduler.name);
  private readonly shutdown = new AbortController();
  private job: CronJob | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly registry: SchedulerRegistry,
    private readonly purge: IdempotencyPurgeService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: Metrics,
  ) {}

  onApplicationBootstrap(): void {
    const cronTime = this.config.idempotencyPurgeCron;
    if (cronTime === null) {
      this.logger.log('IDEMPOTENCY_PURGE_CRON=off: expired idempotency keys are not purged by this instance');
      return;
    }
    // waitForCompletion: a tick that comes while this process is still purging is dropped.
    this.job = CronJob.from({ cronTime, onTick: () => this.tick(), waitForCompletion: true, start: false });
    this.registry.addCronJob(PURGE_JOB, this.job);
    this.job.start();
  }

  /** Stops ticking and lets a running purge end after its current batch, before the pool closes. */
  async beforeApplicationShutdown(): Promise<void> {
    void this.job?.stop();
    this.shutdown.abort();
    await this.running;
  }

  private async tick(): Promise<void> {
    this.running = this.run();
    try {
      await this.running;
    } finally {
      this.running = null;
    }
  }

  private async run(): Promise<void> {
    try {
      const result = await this.purge.purge(this.shutdown.signal);
      this.metrics.recordPurge(result);
      this.logger.log({
        msg: describePurge(result),
        deleted: result.deleted,
        batches: result.batches,
        duration_ms: Math.round(result.durationMs),
        skipped: result.skipped,
        finished: result.finished,
      });
    } catch (error) {
      // The next tick tries again; nothing is half done (each batch is its own
      // transaction), and the batches that committed before the failure are counted.
      const deleted = error instanceof PurgeFailed ? error.partial.deleted : 0;
      this.metrics.recordPurgeFailure(deleted);
      this.logger.error({
        msg: `The purge of expired idempotency keys failed${purgeFailureDetail(error)}`,
        deleted,
        // The database's own error, not the wrapper that carries the count.
        error: String(error instanceof PurgeFailed ? error.cause : error),
      });
    }
  }
}
