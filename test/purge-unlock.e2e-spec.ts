import { DataSource } from 'typeorm';
import { ADVISORY_LOCKS } from '../src/database/advisory-locks';
import type { DbOptions } from '../src/database/db';
import { IdempotencyPurgeService } from '../src/idempotency/idempotency-purge.service';
import { startTestApp, TestApp } from './support/test-app';

const PURGE_LOCK = ADVISORY_LOCKS.purge;
const SESSION: DbOptions = { mode: 'session', poolSize: 20 };

describe('the purge when unlocking fails (docs/operations.md)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ IDEMPOTENCY_PURGE_CRON: 'off' });
  });
  afterAll(() => t.close());

  const purgeLockHeld = async () =>
    (
      await t.db.pool.query(
        `SELECT count(*)::int AS n FROM pg_locks
          WHERE locktype = 'advisory' AND classid::bigint = $1 AND objid::bigint = $2 AND objsubid = 2
            AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        [PURGE_LOCK.classid, PURGE_LOCK.objid],
      )
    ).rows[0].n > 0;

  /** The app's data source, except that pg_advisory_unlock fails as on a broken connection. */
  function withFailingUnlock(dataSource: DataSource): DataSource {
    return new Proxy(dataSource, {
      get(target, property, receiver) {
        if (property !== 'createQueryRunner') return Reflect.get(target, property, receiver);
        return () => {
          const runner = target.createQueryRunner();
          const connect = runner.connect.bind(runner);
          runner.connect = async () => {
            const client = await connect();
            const query = client.query.bind(client);
            client.query = (sql: string | { text: string }, ...rest: unknown[]) =>
              (typeof sql === 'string' ? sql : sql.text).includes('pg_advisory_unlock')
                ? Promise.reject(new Error('Connection terminated unexpectedly'))
                : query(sql, ...rest);
            return client;
          };
          return runner;
        };
      },
    });
  }

  // Behind a transaction pooler the purge holds no session lock at all (docs/operations.md).
  const direct = process.env.KUKO_TEST_POOLER === undefined;
  (direct ? it : it.skip)(
    'closes the connection instead of returning it to the pool still holding the lock',
    async () => {
      const dataSource = t.app.get(DataSource);
      const result = await IdempotencyPurgeService.on(withFailingUnlock(dataSource), SESSION).purge();
      expect(result).toMatchObject({ skipped: false, finished: true });

      // The session ended, so PostgreSQL dropped its lock (a moment after the close). Well
      // before the pool's 10 s idle timeout, which would otherwise end that session too.
      const deadline = Date.now() + 3_000;
      while ((await purgeLockHeld()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await purgeLockHeld()).toBe(false);

      // Every pooled connection may now take the lock: the next runs are not skipped.
      for (let run = 0; run < 5; run++) {
        expect((await IdempotencyPurgeService.on(dataSource, SESSION).purge()).skipped).toBe(false);
      }
    },
  );
});
