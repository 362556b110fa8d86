import { Logger } from '@nestjs/common';
import { constants } from 'node:os';

export type StopSignal = 'SIGTERM' | 'SIGINT' | 'SIGHUP';

/**
 * SIGHUP too (the terminal of `npm start` closed): Node's default would end the process at
 * once, dropping what is in flight and leaving the embedded PostgreSQL running.
 */
export const STOP_SIGNALS: readonly StopSignal[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];

/**
 * The handler until the process serves: a signal ends the start where it is (waiting for
 * another instance's migration lock, say), in one line, and stops the embedded PostgreSQL
 * if one was started (`stopDatabase`); nothing was served, so nothing is drained. Exits as
 * the signal would (143 for SIGTERM, 130 for SIGINT). What the rest of the start logs as
 * its database goes away is our own doing, so logging ends with that line.
 */
export function stopWhileStarting(logger: Logger, stopDatabase: () => Promise<void>): (signal: StopSignal) => void {
  return (signal) => {
    logger.warn(`${signal} received while starting: stopping before serving`);
    Logger.overrideLogger(false);
    void stopDatabase().finally(() => process.exit(128 + constants.signals[signal]));
  };
}

/**
 * The process's stop signals, acted on once. The first calls the current handler; every
 * later one is logged and changes nothing. Ctrl-C under `npm start` delivers SIGINT twice
 * (the terminal signals the whole process group, and npm forwards its own copy), as does a
 * service manager that signals every process of its unit. With one-shot listeners the
 * second signal would find none, and Node's default action would end the process
 * mid-drain: requests in flight cut off, the embedded PostgreSQL left running. What bounds
 * a stop is SHUTDOWN_TIMEOUT_MS, not a second signal (SIGKILL still ends it at once).
 */
export class StopSignals {
  private stopping: StopSignal | null = null;

  constructor(
    signals: readonly StopSignal[],
    private handler: (signal: StopSignal) => void,
    private readonly logger: Logger,
  ) {
    for (const signal of signals) process.on(signal, this.receive);
  }

  /** Whether a stop signal has come: a start then goes no further. */
  get received(): boolean {
    return this.stopping !== null;
  }

  /** What the first signal does from now on (while starting: stop there; once serving: drain). */
  onStop(handler: (signal: StopSignal) => void): void {
    this.handler = handler;
  }

  private readonly receive = (signal: StopSignal): void => {
    if (this.stopping !== null) {
      this.logger.log(`${signal} received again: already stopping since ${this.stopping}`);
      return;
    }
    this.stopping = signal;
    this.handler(signal);
  };
}

/** What a serving process closes when it stops, and for how long it may take. */
export interface Drain {
  /** What is in flight, for the log lines: "requests and notification attempts". */
  inFlight: string;
  /** SHUTDOWN_TIMEOUT_MS. */
  timeoutMs: number;
  /** Closes the application: waits for what is in flight (Nest's app.close()). */
  close(): Promise<void>;
  /** Stops the embedded PostgreSQL, if this process started one. */
  stopDatabase(): Promise<void>;
}

/**
 * The stop of a serving process (`npm start`, `npm run worker`): lets what is in flight
 * finish, stops the embedded PostgreSQL and exits 0. What is still in flight after
 * SHUTDOWN_TIMEOUT_MS must not hold the process (a client that never finishes its
 * request, a merchant's endpoint that answers no sooner than NOTIFY_TIMEOUT_MS): it
 * exits 1 then anyway. PostgreSQL rolls back whatever was still open, and a notification
 * attempt cut off is made again once its lease ends (docs/notifications.md).
 */
export function drainThenExit(
  logger: Logger,
  drain: Drain,
  exitProcess: (code: number) => void = (code) => process.exit(code),
): (signal: StopSignal) => Promise<void> {
  let exiting = false;
  const exit = (code: number) => {
    // Once: the deadline and the end of the drain may come together.
    if (exiting) return;
    exiting = true;
    void drain
      .stopDatabase()
      .catch(() => undefined)
      .finally(() => {
        // The last line: an operator sees the stop ended, not only that it began.
        if (code === 0) logger.log('stopped: everything in flight finished');
        exitProcess(code);
      });
  };
  return async (signal) => {
    logger.log(`${signal} received: finishing the ${drain.inFlight} in flight (at most ${drain.timeoutMs} ms)`);
    const deadline = setTimeout(() => {
      logger.warn(`${drain.inFlight} in flight outlasted SHUTDOWN_TIMEOUT_MS=${drain.timeoutMs}; exiting now`);
      exit(1);
    }, drain.timeoutMs);
    deadline.unref();
    try {
      await drain.close();
      exit(0);
    } catch (error) {
      logger.error(`the stop failed: ${(error as Error).message}`);
      exit(1);
    }
  };
}
