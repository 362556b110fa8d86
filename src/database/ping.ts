import { within } from './within';
import type { Db } from './db';
import { unavailableReason } from './pg-errors';

/** The outcome of a readiness check: up, or why not in words for the operator. */
export type DatabaseCheck = { up: true } | { up: false; reason: string };

/** Whether the database answers a trivial statement within `timeoutMs`, and if not, why. */
export function ping(db: Db, timeoutMs: number): Promise<DatabaseCheck> {
  const answered = db.one('SELECT 1').then(
    (): DatabaseCheck => ({ up: true }),
    (error: unknown): DatabaseCheck => ({ up: false, reason: unavailableReason(error) }),
  );
  return within(answered, timeoutMs, () => ({
    up: false,
    reason: `did not answer within ${timeoutMs} ms: unreachable, every connection busy, or too slow`,
  }));
}
