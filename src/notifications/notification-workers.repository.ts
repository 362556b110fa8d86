import { Injectable } from '@nestjs/common';
import { Db } from '../database/db';

/**
 * The notification_workers table: a lease per graphile-worker pool id (the `locked_by` of
 * the jobs it holds), renewed by a heartbeat, so that jobs locked by a pool whose process
 * died (kill -9, a lost machine) are unlocked by any other instance once the lease runs
 * out (docs/notifications.md).
 */
@Injectable()
export class NotificationWorkersRepository {
  constructor(private readonly db: Db) {}

  async renew(workerIds: string[]): Promise<void> {
    await this.db.rows(
      `INSERT INTO notification_workers (worker_id) SELECT unnest($1::text[])
       ON CONFLICT (worker_id) DO UPDATE SET seen_at = now()`,
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
   */
  async unlockJobsOfSilentWorkers(leaseSeconds: number): Promise<void> {
    await this.db.transaction('notifications', async () => {
      const held = await this.db.rows<{ id: string; locked_by: string; attempts: number }>(
        `SELECT j.id, j.locked_by, j.attempts FROM graphile_worker.jobs j
          WHERE j.locked_by IS NOT NULL AND j.locked_at < now() - make_interval(secs => $1)
            AND NOT EXISTS (SELECT 1 FROM notification_workers w
                             WHERE w.worker_id = j.locked_by AND w.seen_at > now() - make_interval(secs => $1))`,
        [leaseSeconds],
      );
      if (held.length === 0) return;
      const workerIds = [...new Set(held.map((job) => job.locked_by))];
      await this.db.rows('SELECT graphile_worker.force_unlock_workers($1::text[])', [workerIds]);
      await this.db.rows(
        `SELECT count(*) FROM (
           SELECT graphile_worker.reschedule_jobs(array_agg(id), attempts => greatest(attempts - 1, 0))
             FROM unnest($1::bigint[], $2::int[]) AS held(id, attempts) GROUP BY attempts) AS given_back`,
        [held.map((job) => job.id), held.map((job) => job.attempts)],
      );
    });
  }

  /** Forgets leases long expired, so the table stays small. */
  async forgetExpired(leaseSeconds: number): Promise<void> {
    await this.db.rows(`DELETE FROM notification_workers WHERE seen_at < now() - make_interval(secs => $1 * 10)`, [
      leaseSeconds,
    ]);
  }

  async release(workerIds: string[]): Promise<void> {
    await this.db.rows('DELETE FROM notification_workers WHERE worker_id = ANY($1)', [workerIds]);
  }
}
