import { within } from './within';
import type { Db } from './db';
import { READ_ONLY, unavailableReason } from './pg-errors';

/** The outcome of a readiness check: up, or why not in words for the operator. */
export type DatabaseCheck = { up: true } | { up: false; reason: string };

/**
 * Whether the database answers a trivial statement within `timeoutMs` and takes writes,
 * and if not, why. A read-only one (a standby, a primary demoted after a failover) would
 * answer every write 503: an instance still connected to it is not ready.
 */
export function ping(db: Db, timeoutMs: number): Promise<DatabaseCheck> {
  const answered = db.takesWrites().then(
    (writable): DatabaseCheck => (writable ? { up: true } : { up: false, reason: READ_ONLY }),
    (error: unknown): DatabaseCheck => ({ up: false, reason: unavailableReason(error) }),
  );
  return within(answered, timeoutMs, () => ({
    up: false,
    reason: `did not answer within ${timeoutMs} ms: unreachable, every connection busy, or too slow`,
  }));
}
