import type { Db } from './db';
import { unavailableReason } from './pg-errors';

/** The outcome of a readiness check: up, or why not in words for the operator. */
export type DatabaseCheck = { up: true } | { up: false; reason: string };

/** Whether the database answers a trivial statement within `timeoutMs`, and if not, why. */
export async function ping(db: Db, timeoutMs: number): Promise<DatabaseCheck> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<DatabaseCheck>((resolve) => {
    timer = setTimeout(
      () =>
        resolve({
          up: false,
          reason: `did not answer within ${timeoutMs} ms: unreachable, every connection busy, or too slow`,
        }),
      timeoutMs,
    );
  });
  try {
    const answered = db.one('SELECT 1').then(
      (): DatabaseCheck => ({ up: true }),
      (error: unknown): DatabaseCheck => ({ up: false, reason: unavailableReason(error) }),
    );
    return await Promise.race([answered, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
