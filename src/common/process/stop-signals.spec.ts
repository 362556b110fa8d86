import { Logger } from '@nestjs/common';
import { drainThenExit } from './stop-signals';

/** A drain whose close is `close`, recording what it did and how the process exited. */
function draining(close: () => Promise<void>, timeoutMs = 1000) {
  const done: string[] = [];
  const logger = {
    log: (line: string) => line.startsWith('stopped') && done.push(line),
    warn: (line: string) => done.push(line),
    error: (line: string) => done.push(line),
  };
  const exited = new Promise<number>((resolve) => {
    const stop = drainThenExit(
      logger as unknown as Logger,
      {
        inFlight: 'requests',
        timeoutMs,
        close,
        stopDatabase: async () => void done.push('database stopped'),
      },
      resolve,
    );
    void stop('SIGTERM');
  });
  return { done, exited };
}

describe('drainThenExit', () => {
  it('stops the database and exits 0 once what is in flight has finished', async () => {
    const { done, exited } = draining(async () => undefined);
    expect(await exited).toBe(0);
    expect(done).toEqual(['database stopped', 'stopped: everything in flight finished']);
  });

  it('exits 1 at the deadline, stopping the database once even if the drain ends just after', async () => {
    let finish!: () => void;
    const { done, exited } = draining(() => new Promise<void>((resolve) => (finish = resolve)), 50);
    expect(await exited).toBe(1);
    finish();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(done).toEqual(['requests in flight outlasted SHUTDOWN_TIMEOUT_MS=50; exiting now', 'database stopped']);
  });

  it('says why and exits 1 when closing fails, still stopping the database', async () => {
    const { done, exited } = draining(() => Promise.reject(new Error('pool already ended')));
    expect(await exited).toBe(1);
    expect(done).toEqual(['the stop failed: pool already ended', 'database stopped']);
  });
});
