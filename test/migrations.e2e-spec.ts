import { runMigrations } from '../src/database/migrations';
import { createTestDatabase, databaseEnv, TestDatabase } from './support/database';

/**
 * Instances starting at once on an empty database (and `npm run migration:run` beside
 * them) each run the migrations; without the advisory lock of runMigrations, two would
 * create the same tables side by side and one would fail on the catalogue's unique index.
 */
describe('migrations run by several runners at once', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.drop());

  it('apply every migration once, one runner after another, and all of them succeed', async () => {
    const env = databaseEnv(db.url);
    const url = env.DATABASE_DIRECT_URL ?? env.DATABASE_URL;
    const runs = await Promise.allSettled(Array.from({ length: 4 }, () => runMigrations(url)));
    expect(runs.map((run) => run.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
    const applied = runs.map((run) => (run as PromiseFulfilledResult<string[]>).value);
    // One runner applied them all; the others found none pending.
    expect(applied.filter((names) => names.length > 0)).toHaveLength(1);
    const { rows } = await db.pool.query('SELECT name, count(*)::int AS n FROM migrations GROUP BY name');
    expect(rows.length).toBe(applied.flat().length);
    expect(rows.every((row: { n: number }) => row.n === 1)).toBe(true);
  });
});
