/**
 * How a start-up waits for its database (DATABASE_START_TIMEOUT_MS): a database started
 * beside the service (one `docker compose up`, a host's boot), restarting, or behind a
 * PgBouncer that answers from a failed login for `server_login_retry` (15 s) is there a
 * little later. Each try that fails says why, in one line without the URL's password.
 */
import { SetupRefused } from './database-setup';
import { isPassingAtStart } from './pg-errors';

/** Between tries. */
const PAUSE_MS = 1000;

/**
 * `connect`'s result, tried again while it fails in a way that waiting may change
 * (isPassingAtStart) for up to `timeoutMs` (0: one try). Anything else (a database set up
 * wrongly: SetupRefused), and the last failure, is thrown as it is.
 */
export async function untilReachable<T>(
  connect: () => Promise<T>,
  timeoutMs: number,
  say: (line: string) => void,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await connect();
    } catch (error) {
      const left = deadline - Date.now();
      if (left <= 0 || error instanceof SetupRefused || !isPassingAtStart(error)) throw error;
      const pause = Math.min(PAUSE_MS, left);
      say(
        `${(error as Error).message}; trying again in ${pause} ms, for up to ${Math.ceil(left / 1000)} s more ` +
          `(DATABASE_START_TIMEOUT_MS=${timeoutMs})`,
      );
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}
