import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { PoolStats } from '../../database/db';
import { within } from '../../database/within';

const PREFIX = 'kukopay_';

/** The label values of the counters that export every series from the start. */
export const IDEMPOTENCY_OUTCOMES = ['executed', 'replayed', 'in_progress', 'mismatch', 'unreadable'] as const;
export type IdempotencyOutcome = (typeof IDEMPOTENCY_OUTCOMES)[number];
export const CREDENTIALS = ['api_key', 'admin_token', 'metrics_token'] as const;
export type Credential = (typeof CREDENTIALS)[number];
const PURGE_RESULTS = ['finished', 'stopped_early', 'skipped', 'failed'] as const;
const NOTIFICATION_RESULTS = ['delivered', 'failed'] as const;

/** Latency buckets in seconds: a keyed create takes a few ms, a slow lock wait seconds. */
const LATENCY_BUCKETS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * Every series of GET /metrics (docs/operations.md lists them). One registry per
 * application, not prom-client's global one, so that two instances in one process (tests)
 * count apart. Labels are bounded: route templates, status codes, error codes from the
 * catalog, configured provider names; never a URL, an id or a key.
 */
export class Metrics {
  readonly registry = new Registry();

  readonly requests = new Counter({
    name: `${PREFIX}http_requests_total`,
    help: 'HTTP requests answered, by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  readonly requestDuration = new Histogram({
    name: `${PREFIX}http_request_duration_seconds`,
    help: 'Time from the request arriving to its answer being sent, by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly idempotency = new Counter({
    name: `${PREFIX}idempotency_outcomes_total`,
    help: 'Idempotency-Key outcomes: executed, replayed, in_progress, mismatch, unreadable',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly webhookEvents = new Counter({
    name: `${PREFIX}webhook_events_total`,
    help: 'Webhook deliveries by provider and outcome: processed, rejected, ignored, duplicate, or the error code',
    labelNames: ['provider', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly authFailures = new Counter({
    name: `${PREFIX}auth_failures_total`,
    help: 'Requests refused for a missing or wrong credential, by credential and answer (401, or 429 when limited)',
    labelNames: ['credential', 'status'] as const,
    registers: [this.registry],
  });
  readonly purgeDeletedRows = new Counter({
    name: `${PREFIX}idempotency_purge_deleted_rows_total`,
    help: 'Expired idempotency keys deleted by the purge runs of this instance',
    registers: [this.registry],
  });
  readonly purgeRuns = new Counter({
    name: `${PREFIX}idempotency_purge_runs_total`,
    help: 'Purge runs of this instance by result: finished, stopped_early, skipped (another instance purging), failed',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly purgeLastRun = new Gauge({
    name: `${PREFIX}idempotency_purge_last_run_timestamp_seconds`,
    help: 'Unix time at which the last purge run of this instance ended, whatever its result',
    registers: [this.registry],
  });
  readonly purgeLastSuccess = new Gauge({
    name: `${PREFIX}idempotency_purge_last_success_timestamp_seconds`,
    help: 'Unix time at which a purge run of this instance last finished or stopped early without error',
    registers: [this.registry],
  });
  readonly notificationAttempts = new Counter({
    name: `${PREFIX}notification_attempts_total`,
    help: 'Merchant notification delivery attempts by result (delivered, failed, …)',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly notificationsPutBack = new Counter({
    name: `${PREFIX}notifications_put_back_total`,
    help: 'Notification attempts put back for later because their merchant already held its share of the workers',
    registers: [this.registry],
  });

  constructor(poolStats: () => PoolStats) {
    collectDefaultMetrics({ register: this.registry });
    // Every series of a known, bounded label set is exported from the start, at 0: a rate
    // or an alert over it then reads 0 on a fresh instance, not "no data".
    for (const outcome of IDEMPOTENCY_OUTCOMES) this.idempotency.inc({ outcome }, 0);
    for (const credential of CREDENTIALS)
      for (const status of ['401', '429']) this.authFailures.inc({ credential, status }, 0);
    for (const result of PURGE_RESULTS) this.purgeRuns.inc({ result }, 0);
    for (const result of NOTIFICATION_RESULTS) this.notificationAttempts.inc({ result }, 0);
    const pool = (name: string, help: string, read: (stats: PoolStats) => number) =>
      new Gauge({
        name: `${PREFIX}db_pool_${name}`,
        help,
        registers: [this.registry],
        collect() {
          this.set(read(poolStats()));
        },
      });
    pool('size', 'Connections the pool may open (DATABASE_POOL_SIZE)', (stats) => stats.size);
    pool('total_connections', 'Connections open now, in use or idle', (stats) => stats.total);
    pool('idle_connections', 'Open connections in use by no request', (stats) => stats.idle);
    pool('waiting_clients', 'Requests waiting for a connection or a write slot', (stats) => stats.waiting);
  }

  recordPurge(result: { deleted: number; skipped: boolean; finished: boolean }): void {
    const result_ = result.skipped ? 'skipped' : result.finished ? 'finished' : 'stopped_early';
    this.purgeRuns.inc({ result: result_ });
    this.purgeDeletedRows.inc(result.deleted);
    const now = Date.now() / 1000;
    this.purgeLastRun.set(now);
    if (!result.skipped) this.purgeLastSuccess.set(now);
  }

  /** A failed run; `deleted`: the rows its batches removed before the failure. */
  recordPurgeFailure(deleted = 0): void {
    this.purgeRuns.inc({ result: 'failed' });
    this.purgeDeletedRows.inc(deleted);
    this.purgeLastRun.set(Date.now() / 1000);
  }

  /**
   * Gauges read from the database at each scrape, all from one call of `query` per scrape
   * (see onePerScrape). When the query fails, or has not answered within
   * DATABASE_GAUGE_WAIT_MS, a gauge keeps its last value: a database that stopped answering
   * must not take the whole scrape, the pool gauges that show it included. Features add
   * theirs this way (the idempotency purge's backlog, notifications' backlog,
   * docs/operations.md); until a feature does, its gauges do not exist.
   */
  gaugesFromQuery<T>(query: () => Promise<T>, gauges: { name: string; help: string; pick: (row: T) => number }[]) {
    const read = onePerScrape(query);
    for (const { name, help, pick } of gauges) {
      new Gauge({
        name: `${PREFIX}${name}`,
        help,
        registers: [this.registry],
        async collect() {
          const row = await read();
          if (row !== null) this.set(pick(row));
        },
      });
    }
  }
}

/** How long a scrape waits for the database's gauges (Prometheus's own scrape timeout is 10 s). */
export const DATABASE_GAUGE_WAIT_MS = 2000;

/**
 * Gauges collected together share one call of `source` (one query per scrape): prom-client
 * starts every collect of a scrape before awaiting any, so they all join the call in flight.
 * A call still running when the next scrape comes is joined again rather than repeated, so
 * a database that stopped answering is asked once, not once per scrape.
 */
function onePerScrape<T>(source: () => Promise<T>): () => Promise<T | null> {
  let running: Promise<T | null> | null = null;
  return () => {
    running ??= source()
      .catch(() => null)
      .finally(() => (running = null));
    return within(running, DATABASE_GAUGE_WAIT_MS, () => null);
  };
}
