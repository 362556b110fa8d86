import type { Pool } from 'pg';
import { isClientTimeout } from '../database/pg-errors';

/**
 * The notification_workers table: a lease per graphile-worker pool id (the `locked_by` of
 * the jobs it holds), renewed by a heartbeat, so that jobs locked by a pool whose process
 * died (kill -9, a lost machine) are unlocked by any other instance once the lease runs
 * out (docs/notifications.md).
 *
 * On the queue's own server (DATABASE_DIRECT_URL behind a pooler), where the jobs are
 * locked, not through the application's pooler: an instance whose pooler is away still
 * holds its jobs, and waits to record their attempts (delivery.task.ts); through the
 * pooler, its lease would lapse meanwhile and another instance would send those attempts
 * again. The heartbeat's connection is its own (delivery-queue.ts).
 */
export class NotificationWorkersRepository {
  constructor(private readonly pool: Pool) {}

  async renew(workerIds: string[]): Promise<void> {
    await this.pool.query(
      `INSERT INTO notification_workers (worker_id) SELECT unnest($1::text[])
       ON CONFLICT (worker_id) DO UPDATE SET seen_at = now()`,
      [workerIds],
    );
  }

  /**
   * Renews the lock time of the jobs `workerIds` hold, once it is an hour old.
   * graphile-worker unlocks any job locked for more than 4 hours, whoever holds it (its own
   * guess that the holder died), and the job would then be sent again while its attempt
   * still waits to be recorded (an outage of hours, delivery.task.ts); the lease already
   * tells a live holder from a dead one. It scans the jobs (no index on locked_by): run
   * far less often than the heartbeat (delivery-queue.ts).
   */
  async renewJobLocks(workerIds: string[]): Promise<void> {
    await this.pool.query(
      `UPDATE graphile_worker._private_jobs SET locked_at = now()
        WHERE locked_by = ANY($1::text[]) AND locked_at < now() - interval '1 hour'`,
      [workerIds],
    );
  }

  /**
   * Unlocks the jobs of every worker whose lease ran out, and gives each back the attempt
   * its lock was charged. graphile-worker counts an attempt when it locks a job (against
   * the job's max_attempts, which are for a task that threw); a job whose process was
   * killed while it held it never ran to an end, and ten such kills (a crash-looping
   * instance) would otherwise leave its event pending for ever. Through the queue's
   * public functions, in one transaction, so no pool takes a job between its unlock and
   * its count; the count is set, not lowered, so a concurrent unlock by another instance
   * (which then finds nothing to unlock) sets the same value again.
   *
   * The leases are judged as of the transaction's start (now() is fixed at BEGIN), which
   * must come by `beganBy` (performance.now()), soon after the caller's own renewal.
   * A transaction held up on its way (a network or a server frozen between that renewal
   * and it) would judge them as of after an outage its caller has not seen in its own
   * lease, and take the attempts every live instance still has in flight: it does nothing.
   */
  async unlockJobsOfSilentWorkers(leaseSeconds: number, beganBy: number): Promise<void> {
    const client = await this.pool.connect();
    // A connection whose ROLLBACK failed is broken: ended instead of going back to the pool.
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      if (performance.now() > beganBy) {
        await client.query('ROLLBACK');
        return;
      }
      const { rows: held } = await client.query<{ id: string; locked_by: string; attempts: number }>(
        `SELECT j.id, j.locked_by, j.attempts FROM graphile_worker.jobs j
          WHERE j.locked_by IS NOT NULL AND j.locked_at < now() - make_interval(secs => $1)
            AND NOT EXISTS (SELECT 1 FROM notification_workers w
                             WHERE w.worker_id = j.locked_by AND w.seen_at > now() - make_interval(secs => $1))`,
        [leaseSeconds],
      );
      if (held.length > 0) {
        const workerIds = [...new Set(held.map((job) => job.locked_by))];
        await client.query('SELECT graphile_worker.force_unlock_workers($1::text[])', [workerIds]);
        await client.query(
          `SELECT count(*) FROM (
             SELECT graphile_worker.reschedule_jobs(array_agg(id), attempts => greatest(attempts - 1, 0))
               FROM unnest($1::bigint[], $2::int[]) AS held(id, attempts) GROUP BY attempts) AS given_back`,
          [held.map((job) => job.id), held.map((job) => job.attempts)],
        );
      }
      await client.query('COMMIT');
    } catch (error) {
      // A statement with no answer in time leaves the connection waiting for it: ended at
      // once, not after a ROLLBACK that would wait behind it.
      broken = isClientTimeout(error)
        ? (error as Error)
        : await client.query('ROLLBACK').then(
            () => undefined,
            () => error as Error,
          );
      throw error;
    } finally {
      client.release(broken);
    }
  }

  /** Forgets leases long expired, so the table stays small. */
  async forgetExpired(leaseSeconds: number): Promise<void> {
    await this.pool.query(`DELETE FROM notification_workers WHERE seen_at < now() - make_interval(secs => $1 * 10)`, [
      leaseSeconds,
    ]);
  }

  async release(workerIds: string[]): Promise<void> {
    await this.pool.query('DELETE FROM notification_workers WHERE worker_id = ANY($1)', [workerIds]);
  }
}
