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
   * instance) would otherwise leave its event pending for ever. One transaction; a
   * concurrent one of another instance waits for the rows, finds them unlocked and gives
   * nothing back.
   */
  async unlockJobsOfSilentWorkers(leaseSeconds: number): Promise<void> {
    await this.db.transaction('notifications', async () => {
      const dead = await this.db.rows<{ locked_by: string }>(
        `WITH dead AS (
           SELECT DISTINCT j.locked_by FROM graphile_worker.jobs j
            WHERE j.locked_by IS NOT NULL AND j.locked_at < now() - make_interval(secs => $1)
              AND NOT EXISTS (SELECT 1 FROM notification_workers w
                               WHERE w.worker_id = j.locked_by AND w.seen_at > now() - make_interval(secs => $1))),
         -- Locked in id order, so two instances unlocking at once cannot deadlock.
         held AS (
           SELECT p.id FROM graphile_worker._private_jobs p JOIN dead ON p.locked_by = dead.locked_by
            ORDER BY p.id FOR UPDATE OF p)
         UPDATE graphile_worker._private_jobs j SET attempts = greatest(j.attempts - 1, 0)
           FROM held WHERE j.id = held.id
         RETURNING j.locked_by`,
        [leaseSeconds],
      );
      if (dead.length === 0) return;
      const workerIds = [...new Set(dead.map((row) => row.locked_by))];
      await this.db.rows('SELECT graphile_worker.force_unlock_workers($1::text[])', [workerIds]);
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
