import { ADVISORY_LOCKS, lockArgs } from '../src/database/advisory-locks';
import { runMigrations } from '../src/database/migrations';
import { createTestDatabase, databaseEnv, TestDatabase } from './support/database';
import { startTestApp } from './support/test-app';

/**
 * Instances starting at once on an empty database (and `npm run migration:run` beside
 * them) each run the migrations; without the advisory lock of runMigrations, two would
 * create the same tables side by side and one would fail on the catalogue's unique index.
 */
describe('migrations run by several runners at once', () => {
  let db: TestDatabase;
  let directUrl: string;
  beforeEach(async () => {
    db = await createTestDatabase();
    const env = databaseEnv(db.url);
    directUrl = env.DATABASE_DIRECT_URL ?? env.DATABASE_URL;
  });
  afterEach(() => db.drop());

  async function migrationLocksHeld(): Promise<number> {
    const { rows } = await db.pool.query(
      `SELECT count(*)::int AS n FROM pg_locks
        WHERE locktype = 'advisory' AND classid = $1 AND objid = $2 AND objsubid = 2
          AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      [ADVISORY_LOCKS.migrations.classid, ADVISORY_LOCKS.migrations.objid],
    );
    return rows[0].n;
  }

  it('apply every migration once, one runner after another, and all of them succeed', async () => {
    const runs = await Promise.allSettled(Array.from({ length: 4 }, () => runMigrations(directUrl)));
    expect(runs.map((run) => run.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
    const applied = runs.map((run) => (run as PromiseFulfilledResult<string[]>).value);
    // One runner applied them all; the others found none pending.
    expect(applied.filter((names) => names.length > 0)).toHaveLength(1);
    const { rows } = await db.pool.query('SELECT name, count(*)::int AS n FROM migrations GROUP BY name');
    expect(rows.length).toBe(applied.flat().length);
    expect(rows.every((row: { n: number }) => row.n === 1)).toBe(true);
  });

  it('wait for the lock where another session holds it, and say which backend that is', async () => {
    const holder = await db.pool.connect();
    try {
      const { rows } = await holder.query(
        `SELECT pg_backend_pid() AS pid, pg_advisory_lock(${lockArgs(ADVISORY_LOCKS.migrations)})`,
      );
      const lines: string[] = [];
      let logged!: () => void;
      const firstLine = new Promise<void>((resolve) => (logged = resolve));
      const say = (line: string) => {
        lines.push(line);
        logged();
      };
      const run = runMigrations(directUrl, { log: { info: say, warn: say } });
      await firstLine;
      expect(lines[0]).toMatch(
        new RegExp(
          `migration lock .*held by PostgreSQL backend ${rows[0].pid} .*pg_terminate_backend\\(${rows[0].pid}\\)`,
        ),
      );
      expect(await migrationLocksHeld()).toBe(1);
      await holder.query(`SELECT pg_advisory_unlock(${lockArgs(ADVISORY_LOCKS.migrations)})`);
      expect((await run).length).toBeGreaterThan(0);
    } finally {
      holder.release();
    }
  });

  // Through a transaction pooler the lock would stay on a server connection PgBouncer keeps
  // and lends to others: every later start would wait on it for good.
  (process.env.KUKO_TEST_POOLER === undefined ? it.skip : it)(
    'refuse a transaction pooler before taking the lock, so a correct start after it is not blocked',
    async () => {
      await expect(runMigrations(db.url)).rejects.toThrow(
        /^DATABASE_URL: PostgreSQL did not receive the connection's startup options .*set DATABASE_POOL_MODE=transaction and DATABASE_DIRECT_URL/,
      );
      await expect(
        startTestApp({ DATABASE_POOL_MODE: 'transaction', DATABASE_DIRECT_URL: db.url }, db),
      ).rejects.toThrow(/^DATABASE_DIRECT_URL: PostgreSQL did not receive .*must reach PostgreSQL itself/);
      expect(await migrationLocksHeld()).toBe(0);
      const t = await startTestApp({}, db);
      try {
        await t.http().get('/health/ready').expect(200);
      } finally {
        await t.app.close();
      }
    },
  );
});
