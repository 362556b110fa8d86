/**
 * The job queue that delivers notifications: graphile-worker on the application's
 * PostgreSQL (docs/notifications.md, "Engine").
 *
 * - The relay moves committed events (the outbox rows) to the queue, many per
 *   transaction, every RELAY_MS on every instance that delivers.
 *
 * - Its schema is migrated when the module initialises, before the server listens, even
 *   with NOTIFY_WORKERS=off: a request may enqueue as soon as it is served.
 * - Unless NOTIFY_WORKERS=off, a worker pool runs beside the HTTP server (or alone, with
 *   `npm run worker`), woken by LISTEN/NOTIFY when a job is committed.
 * - Recovery of jobs a killed worker held: graphile-worker unlocks them only after 4
 *   hours. Each instance records a heartbeat for its worker pool's id (what locked jobs
 *   carry in `locked_by`) every few seconds; any instance that has renewed its own for a
 *   whole lease unlocks the jobs of pools whose heartbeat is older than LEASE (their
 *   process died), so such a job is attempted again within about half a minute.
 * - On shutdown the pool stops taking jobs and waits for the attempts in flight, before
 *   the database pool closes.
 */
import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleInit,
} from '@nestjs/common';
import { EventEmitter } from 'node:events';
import { Pool, PoolConfig } from 'pg';
import { DataSource } from 'typeorm';
import { Logger as QueueLogger, run, Runner, runMigrations } from 'graphile-worker';
// A release of the queue's local queue that neither fails nor leaves a rejection unhandled.
import './local-queue-release';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { KEEPALIVE_IDLE_MS, withServerSettings } from '../database/data-source-options';
import { FailureStreak } from '../common/logging/failure-streak';
import { RepeatThrottle } from '../common/logging/repeat-throttle';
import { LeaseClock } from './lease-clock';
import { NotificationWorkersRepository } from './notification-workers.repository';
import { DeliveryTask } from './delivery.task';
import { DELIVER_TASK, DeliveryJob, EventsRepository } from './events.repository';
import { NotificationHttpClient } from './notification-http.client';

const HEARTBEAT_MS = 5000;
/** A worker silent for this long is dead; the jobs it holds are unlocked. */
const LEASE_SECONDS = 20;
const LEASE_MS = LEASE_SECONDS * 1000;
/** Longer than this between two of this instance's own renewals is a gap (lease-clock.ts). */
const RENEWAL_GAP_MS = HEARTBEAT_MS * 1.5;
/**
 * How long the heartbeat waits for a connection, or for the answer to one statement: one
 * that hangs on a connection the network lost without a word fails, its connection is
 * ended, and the next beat (within 5 s) renews on another, within the lease, instead of
 * holding every beat after it. Its statements take milliseconds.
 */
const HEARTBEAT_STATEMENT_LIMIT_MS = 3000;
/**
 * How often the jobs' lock times are renewed (renewJobLocks): well within the hour after
 * which a lock time is renewed, and the 4 hours after which graphile-worker unlocks it.
 */
const JOB_LOCKS_RENEWAL_MS = 10 * 60_000;
/** A stop's attempts waiting for the database give up this long before SHUTDOWN_TIMEOUT_MS. */
const GIVE_UP_BEFORE_DEADLINE_MS = 2000;
const RESTART_DELAY_MS = 2000;
/** How often the relay looks for committed events without a job, and how many it takes at once. */
const RELAY_MS = 100;
/** How often a relay that keeps failing says so again. */
const RELAY_FAILURE_LOG_MS = 30_000;
/**
 * graphile-worker's lines that come back on a timer while the database is away (each
 * poll, each reset of locked jobs, each reconnection): throttled. Every other line of
 * the queue (a task that failed, a release that did not happen) is said each time.
 */
const REPEATING_QUEUE_LINES =
  /^(Error occurred fetching jobs|Error occurred during fetch|Failed to reset locked|Error with notify listener|PostgreSQL (idle|active) client generated error)/;
const RELAY_BATCH = 500;

@Injectable()
export class DeliveryQueue implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(DeliveryQueue.name);
  private readonly heartbeatFailures = new FailureStreak('notification worker heartbeat', RELAY_FAILURE_LOG_MS);
  private readonly queueLines = new RepeatThrottle(RELAY_FAILURE_LOG_MS);
  private pool: Pool | null = null;
  /** The heartbeat's own connection, to the queue's server (HEARTBEAT_STATEMENT_LIMIT_MS). */
  private heartbeatPool: Pool | null = null;
  /** The leases, on the heartbeat's connection (notification-workers.repository.ts). */
  private leases: NotificationWorkersRepository | null = null;
  /** When this instance's own lease was renewed, and what the heartbeat may do meanwhile. */
  private readonly leaseClock = new LeaseClock({
    leaseMs: LEASE_MS,
    gapMs: RENEWAL_GAP_MS,
    jobLocksEveryMs: JOB_LOCKS_RENEWAL_MS,
  });
  /** One heartbeat at a time: one that hangs is not joined by more. */
  private beating = false;
  private runner: Runner | null = null;
  /** A start of the worker pool under way (a replacement's): a stop waits for it, then stops what it started. */
  private starting: Promise<void> | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  private workerIds = new Set<string>();
  /**
   * The pools whose attempts are running in this process, and how many each: their leases
   * are renewed too, a replaced pool's included, until its last attempt ends. A live
   * instance's attempt is never taken from it; the jobs a replaced pool fetched but never
   * started are unlocked once its lease lapses.
   */
  private readonly attemptsRunning = new Map<string, number>();
  private stopping = false;
  private relaying: Promise<void> | null = null;

  constructor(
    private readonly dataSource: DataSource,
    private readonly task: DeliveryTask,
    private readonly events: EventsRepository,
    private readonly client: NotificationHttpClient,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    const settings = this.config.notifications;
    // The queue LISTENs and keeps session state: behind a transaction pooler it needs the
    // server itself (DATABASE_DIRECT_URL), as migrations do.
    const url = this.config.databaseDirectUrl ?? (this.dataSource.options as { url: string }).url;
    const { connectionString, options } = withServerSettings(url, 'session');
    const queuePool = (config: PoolConfig) => {
      const pool = new Pool({
        connectionString,
        application_name: 'kukopay-notifications',
        options,
        // A server gone without a word is noticed by the kernel's probes (data-source-options.ts).
        keepAlive: true,
        keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS,
        ...config,
      });
      // A connection lost while idle (a database restart) must not crash the process.
      pool.on('error', (error) => this.logger.warn(`queue connection lost: ${error.message}`));
      pool.on('connect', (client) => client.on('error', () => undefined));
      return pool;
    };
    // One connection LISTENs; the others serve the workers' job queries.
    this.pool = queuePool({ max: settings.workers ? settings.concurrency + 2 : 2 });
    await runMigrations({ pgPool: this.pool, logger: this.queueLogger() });
    if (!settings.workers) {
      // Enqueuing goes through the application's own pool; this one was for the migrations.
      await this.pool.end();
      this.pool = null;
      return;
    }
    // Its own, so that workers busy with their jobs never keep the heartbeat waiting.
    this.heartbeatPool = queuePool({
      max: 1,
      connectionTimeoutMillis: HEARTBEAT_STATEMENT_LIMIT_MS,
      query_timeout: HEARTBEAT_STATEMENT_LIMIT_MS,
    });
    this.leases = new NotificationWorkersRepository(this.heartbeatPool);
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.notifications.workers || !this.pool) return;
    await this.start();
    this.heartbeat = setInterval(() => void this.beat(), HEARTBEAT_MS);
    this.heartbeat.unref();
    this.relaying = this.relayLoop();
    this.logger.log(`notification workers started (concurrency ${this.config.notifications.concurrency})`);
  }

  private async start(): Promise<void> {
    // This generation's pool gets heartbeats; an abandoned pool's lease lapses once its
    // last running attempt ends (attemptsRunning). graphile-worker locks a job under the
    // id of the pool that fetched it (`locked_by`), not of the worker that runs it, so the
    // pool's id is the one to renew.
    const workerIds = new Set<string>();
    this.workerIds = workerIds;
    const events = new EventEmitter();
    events.on('pool:create', ({ workerPool }: { workerPool: { id: string } }) => {
      workerIds.add(workerPool.id);
      void this.beat();
    });
    let runner: Runner | null = null;
    // The pool shuts itself down when it cannot record a job's end (the database was
    // away). Its shutdown can wait on itself when several such writes failed at once, so
    // it is not awaited: a new pool starts, and the old one's jobs are unlocked once its
    // lease lapses.
    const replace = () => {
      if (this.stopping || (runner !== null && this.runner !== runner)) return;
      this.logger.warn('the notification worker pool stopped; starting a new one');
      this.runner = null;
      workerIds.clear();
      // The runner's cron loop ticks every minute until the runner stops, which it does
      // itself only once its pool's shutdown has ended: stopped here (after the pool has
      // marked itself inactive, so its shutdown is not asked for twice), an abandoned
      // runner leaves no timer behind for the life of the process.
      const abandoned = runner;
      setImmediate(() => void abandoned?.stop().catch(() => undefined));
      this.startLater();
    };
    events.on('pool:gracefulShutdown', () => replace());
    runner = await run({
      pgPool: this.pool!,
      concurrency: this.config.notifications.concurrency,
      noHandleSignals: true,
      pollInterval: 1000,
      logger: this.queueLogger(),
      events,
      preset: {
        worker: {
          // Batched (delay 0) job completion: a database failure while recording a job's end
          // stops the pool (replaced above) instead of rejecting a promise nobody awaits.
          completeJobBatchDelay: 0,
          failJobBatchDelay: 0,
          // The pool fetches (and locks, under its own id: see the lease) up to this many due
          // jobs at once, rather than one per worker per fetch (docs/benchmarks.md).
          localQueue: { size: this.config.notifications.concurrency },
        },
      },
      taskList: {
        [DELIVER_TASK]: (payload, helpers) =>
          this.holdingLease(helpers.job.locked_by, () => this.task.run(payload as DeliveryJob, helpers.job.key)),
      },
    });
    this.runner = runner;
    runner.promise.then(replace, replace);
  }

  /** Runs an attempt of the pool `poolId`, whose lease the heartbeat renews meanwhile. */
  private async holdingLease(poolId: string | null, attempt: () => Promise<void>): Promise<void> {
    if (poolId === null) return attempt();
    this.attemptsRunning.set(poolId, (this.attemptsRunning.get(poolId) ?? 0) + 1);
    try {
      await attempt();
    } finally {
      const left = this.attemptsRunning.get(poolId)! - 1;
      if (left === 0) this.attemptsRunning.delete(poolId);
      else this.attemptsRunning.set(poolId, left);
    }
  }

  private startLater(): void {
    setTimeout(() => {
      if (this.stopping) return;
      this.starting = this.start()
        .catch((error: Error) => {
          this.logger.error(`notification workers could not start: ${error.message}`);
          this.startLater();
        })
        .finally(() => (this.starting = null));
    }, RESTART_DELAY_MS).unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    // Attempts waiting for the database wait through the drain, then give up just before
    // SHUTDOWN_TIMEOUT_MS would cut them off with the process: their jobs fail, and any
    // instance runs them again later.
    const giveUp = setTimeout(
      () => this.task.stop(),
      Math.max(0, this.config.shutdownTimeoutMs - GIVE_UP_BEFORE_DEADLINE_MS),
    );
    giveUp.unref();
    try {
      await this.relaying;
      // A pool that was starting when the stop came is stopped too, not left taking jobs.
      await this.starting;
      if (this.runner) {
        // The heartbeat goes on while the attempts in flight finish: a drain that outlasted
        // the lease would let another instance send the same attempts again, at once.
        await this.runner.stop().catch((error: Error) => this.logger.warn(`worker stop: ${error.message}`));
        this.runner = null;
      }
      // A replaced pool's attempts still running are waited for too.
      while (this.attemptsRunning.size > 0) await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      clearTimeout(giveUp);
    }
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
    if (this.workerIds.size > 0) await this.leases?.release([...this.workerIds]).catch(() => undefined);
    this.client.close();
    // Together: an end waits for every connection lent out (an abandoned pool's), and one
    // that waits must not keep the other from ending.
    await Promise.all([this.pool?.end(), this.heartbeatPool?.end()].map((ending) => ending?.catch(() => undefined)));
    this.pool = null;
    this.heartbeatPool = null;
  }

  /**
   * Moves committed events to the queue: adding a job inside each business transaction
   * halved payment throughput in the bench (docs/benchmarks.md), so the transaction only
   * writes the event row, and this loop adds the jobs of many events in one transaction.
   * The row is the outbox: an event committed just before a crash is relayed by the next
   * run of any instance's loop.
   */
  private async relayLoop(): Promise<void> {
    // While the database is away the loop fails every RELAY_MS.
    const streak = new FailureStreak('notification relay', RELAY_FAILURE_LOG_MS);
    while (!this.stopping) {
      let moved = 0;
      try {
        moved = await this.events.relay(RELAY_BATCH);
        const recovered = streak.succeeded();
        if (recovered) this.logger.log(recovered);
      } catch (error) {
        const line = streak.failed((error as Error).message);
        if (line) this.logger.warn(line);
      }
      if (moved < RELAY_BATCH) await new Promise((resolve) => setTimeout(resolve, RELAY_MS));
    }
  }

  /**
   * Renews the leases of this instance's pools (the current one, and a replaced one while
   * its attempts run), then unlocks the jobs held by pools whose lease ran out, once this
   * instance has renewed its own for a whole lease (lease-clock.ts). Any instance may do
   * the second part; it is one idempotent transaction.
   */
  private async beat(): Promise<void> {
    if (!this.leases || this.beating) return;
    this.beating = true;
    try {
      const workerIds = [...new Set([...this.workerIds, ...this.attemptsRunning.keys()])];
      await this.leases.renew(workerIds);
      const now = performance.now();
      const unlockBeganBy = this.leaseClock.renewed(now);
      const recovered = this.heartbeatFailures.succeeded();
      if (recovered) this.logger.log(recovered);
      if (unlockBeganBy !== null) await this.leases.unlockJobsOfSilentWorkers(LEASE_SECONDS, unlockBeganBy);
      await this.leases.forgetExpired(LEASE_SECONDS);
      // Last: `now` above is when the lease was renewed, and a gap is measured from it. Run
      // before the gap bookkeeping, a renewal that hung through a freeze hid the gap, and the
      // instance unlocked the others' attempts as soon as it thawed.
      if (this.leaseClock.takeJobLocksRenewal(now)) await this.leases.renewJobLocks(workerIds);
    } catch (error) {
      // Every 5 s while the database is away: said once per RELAY_FAILURE_LOG_MS.
      const line = this.heartbeatFailures.failed((error as Error).message);
      if (line) this.logger.warn(line);
    } finally {
      this.beating = false;
    }
  }

  /** The queue's own lines; the ones it repeats on a timer while the database is away, throttled. */
  private queueLogger(): QueueLogger {
    return new QueueLogger(() => (level, message) => {
      if (level !== 'error' && level !== 'warning') return this.logger.debug?.(message);
      const line = REPEATING_QUEUE_LINES.test(message) ? this.queueLines.line(message) : message;
      if (line === null) return;
      if (level === 'error') this.logger.error(line);
      else this.logger.warn(line);
    });
  }
}
