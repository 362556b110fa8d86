import { Pool } from 'pg';
import { Logger, run, Runner, runMigrations } from 'graphile-worker';
import '../src/notifications/local-queue-release';
import { createTestDatabase, TestDatabase } from './support/database';

/**
 * The fix in src/notifications/local-queue-release.ts, on graphile-worker itself: a pool
 * stopped while its local queue holds fetched jobs that no worker has taken yet. One
 * worker and a local queue of four, so that with five jobs queued and the first one
 * running, three wait in the local queue.
 */
describe("graphile-worker's local queue, released while jobs wait in it", () => {
  let db: TestDatabase;
  let pool: Pool;
  let runner: Runner | null;
  let errors: string[];
  let connectionsRefused: boolean;
  let unhandled: unknown[];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);

  beforeEach(async () => {
    db = await createTestDatabase();
    // The queue needs a session (LISTEN): straight to the server, never through a pooler.
    const { connectionString } = db.pool.options as { connectionString: string };
    pool = new Pool({ connectionString, max: 4 });
    pool.on('error', () => undefined);
    pool.on('connect', (client) => client.on('error', () => undefined));
    connectionsRefused = false;
    const connect = pool.connect.bind(pool) as (...args: unknown[]) => Promise<unknown>;
    // The database going away, as the queue sees it: no connection can be had.
    (pool as unknown as { connect: typeof connect }).connect = (...args) =>
      connectionsRefused
        ? Promise.reject(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))
        : connect(...args);
    errors = [];
    unhandled = [];
    process.on('unhandledRejection', onUnhandled);
    runner = null;
  });

  afterEach(async () => {
    await runner?.stop().catch(() => undefined);
    process.off('unhandledRejection', onUnhandled);
    await pool.end().catch(() => undefined);
    await db.drop();
  });

  async function startWithWaitingJobs(): Promise<void> {
    let started!: () => void;
    const firstStarted = new Promise<void>((resolve) => (started = resolve));
    // Queued before the pool starts, so its first fetch takes four: one runs, three wait.
    await runMigrations({ pgPool: pool });
    await db.pool.query(`SELECT graphile_worker.add_job('slow', '{}') FROM generate_series(1, 5)`);
    runner = await run({
      pgPool: pool,
      concurrency: 1,
      noHandleSignals: true,
      pollInterval: 1000,
      logger: new Logger(() => (level, message) => {
        if (level === 'error') errors.push(message);
      }),
      preset: { worker: { localQueue: { size: 4 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } },
      taskList: {
        slow: async () => {
          started();
          await new Promise((resolve) => setTimeout(resolve, 800));
        },
      },
    });
    await firstStarted;
    // Let the fetch that brought the first job settle, so the queue is WAITING with the rest.
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  it('hands the waiting jobs back and lets the running one finish, with no error', async () => {
    await startWithWaitingJobs();
    await runner!.stop();
    runner = null;

    expect(errors).toEqual([]);
    const { rows } = await db.pool.query(
      'SELECT count(*)::int AS left, count(locked_by)::int AS locked FROM graphile_worker.jobs',
    );
    // The first job completed and was deleted; the other four are free for any pool.
    expect(rows[0]).toEqual({ left: 4, locked: 0 });
  });

  it('rejects its release, instead of leaving an unhandled rejection, when the database is away', async () => {
    await startWithWaitingJobs();
    connectionsRefused = true;
    await runner!.stop();
    runner = null;
    // The hand-back's promise settles after its failed attempt.
    await new Promise((resolve) => setTimeout(resolve, 500));

    expect(unhandled).toEqual([]);
    expect(errors.some((line) => line.startsWith('Releasing local queue failed') && line.includes('ECONNRESET'))).toBe(
      true,
    );
    connectionsRefused = false;
    const { rows } = await db.pool.query('SELECT count(locked_by)::int AS locked FROM graphile_worker.jobs');
    // Still locked under the pool's id: the service's lease unlocks them once it lapses.
    expect(rows[0].locked).toBeGreaterThan(0);
  });
});
