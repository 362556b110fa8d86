/**
 * Deletes expired idempotency keys (docs/operations.md). The cron job (idempotency-purge.scheduler.ts)
 * and `npm run purge` (purge.cli.ts) both call purge(); there is no other mechanism.
 *
 * What it guarantees, and how:
 * - Only one purge runs at a time across every instance: a run first takes a session-level
 *   advisory lock with pg_try_advisory_lock on one dedicated connection, holds it for the
 *   whole run and unlocks it at the end. A run that finds the lock taken skips at once;
 *   none ever waits for another.
 * - Request traffic is never blocked behind it: rows go in batches of a few thousand, each
 *   delete its own short transaction (autocommit on that connection, no transaction around
 *   the run), and rows that a request has locked are skipped (SKIP LOCKED), left
 *   for the next run. A request reusing an expired key waits at most for one batch.
 * - A run is bounded: it stops when a batch comes back short (nothing left), when its time
 *   budget is spent, or when it is asked to stop (shutdown), always between two batches.
 * - It only reclaims space. Whether a key is expired is decided when it is read
 *   (`expires_at > now()` in idempotency-keys.repository.ts), so purge lag never lengthens a key's
 *   life, and deleting a row that a request is about to overwrite changes no answer.
 */
import type { DataSource } from 'typeorm';
import { ADVISORY_LOCKS, tryLockSession, tryLockTransaction, unlockSession } from '../database/advisory-locks';
import { Db, DbOptions } from '../database/db';
import { IdempotencyKeysRepository } from './idempotency-keys.repository';

export interface PurgeOptions {
  /** Rows per delete statement (and per transaction). */
  batchSize: number;
  /** No new batch starts after this long; the rest waits for the next run. */
  timeBudgetMs: number;
}

export const DEFAULT_PURGE_OPTIONS: PurgeOptions = { batchSize: 5000, timeBudgetMs: 60_000 };

export interface PurgeResult {
  /** Rows deleted by this run. */
  deleted: number;
  batches: number;
  durationMs: number;
  /** Another instance held the lock: this run did nothing. */
  skipped: boolean;
  /** Nothing expired was left (false when the budget ran out or the run was stopped). */
  finished: boolean;
}

/** What a run has removed so far: each batch commits on its own. */
interface RunSoFar {
  started: number;
  deleted: number;
  batches: number;
}

/**
 * A run that failed after some batches had committed (the database restarted, say): what
 * it removed stays removed, and is reported with the failure rather than lost in it.
 */
export class PurgeFailed extends Error {
  override readonly name = 'PurgeFailed';

  constructor(
    readonly partial: PurgeResult,
    cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
  }
}

export class IdempotencyPurgeService {
  private readonly options: PurgeOptions;

  constructor(
    private readonly db: Db,
    private readonly keys: IdempotencyKeysRepository,
    options: Partial<PurgeOptions> = {},
  ) {
    this.options = { ...DEFAULT_PURGE_OPTIONS, ...options };
  }

  /** The purge on a bare data source, as `npm run purge` runs it. */
  static on(dataSource: DataSource, db: DbOptions, options: Partial<PurgeOptions> = {}): IdempotencyPurgeService {
    return IdempotencyPurgeService.onDb(new Db(dataSource, db), options);
  }

  static onDb(db: Db, options: Partial<PurgeOptions> = {}): IdempotencyPurgeService {
    return new IdempotencyPurgeService(db, new IdempotencyKeysRepository(db), options);
  }

  async purge(signal?: AbortSignal): Promise<PurgeResult> {
    // Counted as batches commit, so that a failure can say what was removed before it;
    // the run's time (and its budget) counts from here, the wait for a connection included.
    const run: RunSoFar = { started: performance.now(), deleted: 0, batches: 0 };
    try {
      return await (this.db.mode === 'transaction'
        ? this.purgeBehindPooler(run, signal)
        : this.purgeInSession(run, signal));
    } catch (error) {
      const durationMs = performance.now() - run.started;
      throw new PurgeFailed(
        { deleted: run.deleted, batches: run.batches, durationMs, skipped: false, finished: false },
        error,
      );
    }
  }

  /**
   * One session holds the lock for the whole run. If unlocking fails, the connection is
   * discarded instead of going back to the pool, so no pooled connection can keep the
   * lock and block every later purge.
   */
  private purgeInSession(run: RunSoFar, signal?: AbortSignal): Promise<PurgeResult> {
    let stillLocked = false;
    return this.db.session(
      async (connection) => {
        if (!(await tryLockSession(connection, ADVISORY_LOCKS.purge))) return this.skipped();
        stillLocked = true;
        try {
          return await this.batches(run, signal, () =>
            this.keys.deleteExpiredBatch(connection, this.options.batchSize),
          );
        } finally {
          stillLocked = !(await unlockSession(connection, ADVISORY_LOCKS.purge).catch(() => false));
        }
      },
      { discardIf: () => stillLocked },
    );
  }

  /**
   * Behind a transaction pooler there is no session to hold a lock: each batch is its own
   * transaction under the transaction-level form of the same lock. A run that meets the
   * lock taken (another instance's batch under way) stops there, reported skipped if it
   * deleted nothing and stopped early otherwise; no row is deleted twice either way.
   */
  private async purgeBehindPooler(run: RunSoFar, signal?: AbortSignal): Promise<PurgeResult> {
    let lockTaken = false;
    const result = await this.batches(run, signal, () =>
      this.db.transaction('purge', async () => {
        if (await tryLockTransaction(this.db, ADVISORY_LOCKS.purge)) {
          return this.keys.deleteExpiredBatch(this.db, this.options.batchSize);
        }
        lockTaken = true;
        return null;
      }),
    );
    return lockTaken && result.batches === 0 ? this.skipped(result.durationMs) : result;
  }

  /**
   * Deletes batch after batch until one comes back short, the budget is spent, it is
   * stopped, or (null) another instance holds the lock: that one goes on, so this run
   * ends without claiming to have finished.
   */
  private async batches(
    run: RunSoFar,
    signal: AbortSignal | undefined,
    deleteBatch: () => Promise<number | null>,
  ): Promise<PurgeResult> {
    const elapsed = () => performance.now() - run.started;
    let finished = false;
    while (!signal?.aborted && (run.batches === 0 || elapsed() < this.options.timeBudgetMs)) {
      const count = await deleteBatch();
      if (count === null) break;
      run.deleted += count;
      run.batches += 1;
      if (count < this.options.batchSize) {
        finished = true;
        break;
      }
    }
    return { deleted: run.deleted, batches: run.batches, durationMs: elapsed(), skipped: false, finished };
  }

  private skipped(durationMs = 0): PurgeResult {
    return { deleted: 0, batches: 0, durationMs, skipped: true, finished: false };
  }
}

/**
 * How a run failed, to follow "failed" in a log line or the CLI's message: what it had
 * removed before the failure, if any batch committed, then why, e.g. " after removing 5000
 * expired idempotency keys in 1.2 s: terminating connection due to administrator command".
 */
export function purgeFailureDetail(error: unknown): string {
  const reason = error instanceof Error ? error.message : String(error);
  if (!(error instanceof PurgeFailed) || error.partial.deleted === 0) return `: ${reason}`;
  return ` after removing ${removed(error.partial)}: ${reason}`;
}

/** One line for logs and the CLI, e.g. "Purged 1234 expired idempotency keys in 0.8 s". */
export function describePurge(result: PurgeResult): string {
  if (result.skipped) return 'Skipped the purge of expired idempotency keys: another instance is running one';
  const summary = `Purged ${removed(result)}`;
  return result.finished ? summary : `${summary}; stopped early, the rest is left for the next run`;
}

/** "1234 expired idempotency keys in 0.8 s" */
function removed({ deleted, durationMs }: PurgeResult): string {
  return `${deleted} expired idempotency ${deleted === 1 ? 'key' : 'keys'} in ${(durationMs / 1000).toFixed(1)} s`;
}
