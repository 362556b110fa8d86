import { constants } from 'node:os';
import type { StartingDatabase } from './resolve-database';

const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

export interface OneShotStop {
  /** Whether a stop signal came: the command's own failure is then not news. */
  readonly received: boolean;
}

/**
 * For the one-shot commands (`npm run migration:run`, `npm run purge`): a stop signal ends
 * the command where it is, in one line, and stops the embedded PostgreSQL the command
 * started or adopted. That server runs in a session of its own (embedded-postgres.ts), so
 * Node's default action, exiting at once, left it running with no owner and said nothing.
 * What the command committed stays; its open transaction rolls back and its locks go as
 * its connection closes. A second signal (Ctrl-C under npm arrives twice) changes
 * nothing. Exits as the signal would: 143 for SIGTERM, 130 for SIGINT.
 */
export function stopOnSignal(command: string, starting: StartingDatabase, say: (line: string) => void): OneShotStop {
  let received = false;
  const stop = (signal: (typeof SIGNALS)[number]) => {
    if (received) return;
    received = true;
    say(`${signal} received: ${command} stopped; what it committed stays, what it had not rolls back`);
    void starting
      .stop()
      .catch(() => undefined)
      .finally(() => process.exit(128 + constants.signals[signal]));
  };
  for (const signal of SIGNALS) process.on(signal, stop);
  return {
    get received() {
      return received;
    },
  };
}
