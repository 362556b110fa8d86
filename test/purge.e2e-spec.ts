import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../src/database/data-source-options';
import { Db } from '../src/database/db';
import { createTestDatabase, databaseEnv } from './support/database';
import { PURGE_JOB } from '../src/idempotency/idempotency-purge.scheduler';
import {
  describePurge,
  IdempotencyPurgeService,
  PurgeFailed,
  PurgeOptions,
} from '../src/idempotency/idempotency-purge.service';
import { IdempotencyKeysRepository } from '../src/idempotency/idempotency-keys.repository';
import type { Connection } from '../src/database/db';
import { ADVISORY_LOCKS } from '../src/database/advisory-locks';

const PURGE_LOCK = ADVISORY_LOCKS.purge;
import { expectSuccess } from './support/expect-error';
import { waitForAWaiterOn } from './support/faults';
import { createMerchant, orderBody, postOrder, TestMerchant } from './support/factories';
import { delta, scrape } from './support/metrics';
import { startTestApp, TestApp } from './support/test-app';

const CLI = join(__dirname, '..', 'dist', 'idempotency', 'purge.cli.js');

describe('the purge of expired idempotency keys (docs/operations.md)', () => {
  let t: TestApp;
  let merchant: TestMerchant;

  // The schedule is off here, so that only the purges a test starts touch its rows.
  beforeAll(async () => {
    t = await startTestApp({ IDEMPOTENCY_PURGE_CRON: 'off' });
    merchant = await createMerchant(t);
  });
  afterAll(() => t.close());
  beforeEach(() => t.db.pool.query('TRUNCATE idempotency_keys'));

  const sql = async (text: string, params: unknown[] = []) => (await t.db.pool.query(text, params)).rows;
  const count = async (where = 'true') =>
    (await sql(`SELECT count(*)::int AS n FROM idempotency_keys WHERE ${where}`))[0].n as number;
  /** n stored answers, expired a second ago or valid for a day, in one statement. */
  const insertKeys = (n: number, state: 'expired' | 'live', prefix = state) =>
    sql(
      `INSERT INTO idempotency_keys (merchant_id, environment, key, method, path, fingerprint,
                                     response_status, response_body, request_id, expires_at)
       SELECT $1, 'test', $2 || '-' || g, 'POST', '/v1/orders', '\\x00', 201, '{}', 'req_' || g,
              now() + CASE WHEN $3 THEN interval '1 day' ELSE - interval '1 second' END
         FROM generate_series(1, $4::int) AS g`,
      [merchant.id, prefix, state === 'live', n],
    );
  const purgeService = (options: Partial<PurgeOptions> = {}) => IdempotencyPurgeService.onDb(t.app.get(Db), options);
  /** Whether some session of this test's database holds the purge lock. */
  const purgeLockHeld = async () =>
    (
      await sql(
        `SELECT count(*)::int AS n FROM pg_locks
          WHERE locktype = 'advisory' AND classid::bigint = $1 AND objid::bigint = $2 AND objsubid = 2
            AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        [PURGE_LOCK.classid, PURGE_LOCK.objid],
      )
    )[0].n > 0;
  const createKeyed = (key: string, body: object) => postOrder(t, merchant.testKey, body, key);
  /**
   * Every delete from idempotency_keys past the first `rows` fails (a real error in the
   * statement, as a database restart would end it), whichever batch it falls in. Returns
   * what removes the fault.
   */
  const failDeletesAfter = async (rows: number) => {
    await sql(`CREATE SEQUENCE kuko_purge_fault;
      CREATE FUNCTION kuko_purge_fault() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF nextval('kuko_purge_fault') > ${rows} THEN RAISE EXCEPTION 'injected purge failure'; END IF;
        RETURN OLD;
      END $$;
      CREATE TRIGGER kuko_purge_fault BEFORE DELETE ON idempotency_keys
        FOR EACH ROW EXECUTE FUNCTION kuko_purge_fault();`);
    return () =>
      sql(`DROP TRIGGER kuko_purge_fault ON idempotency_keys; DROP FUNCTION kuko_purge_fault();
           DROP SEQUENCE kuko_purge_fault;`);
  };

  describe('one run', () => {
    it('removes exactly the 100,000 expired keys and leaves every unexpired one', async () => {
      await insertKeys(100_000, 'expired');
      await insertKeys(2_000, 'live');
      const key = randomUUID();
      const body = orderBody();
      const first = await createKeyed(key, body);
      expectSuccess(first, 201);

      const result = await t.app.get(IdempotencyPurgeService).purge();

      expect(result).toMatchObject({ deleted: 100_000, batches: 21, skipped: false, finished: true });
      expect(await count()).toBe(2_001);
      expect(await count(`expires_at <= now()`)).toBe(0);
      expect(await count(`key LIKE 'live-%'`)).toBe(2_000);
      const again = await createKeyed(key, body);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.text).toBe(first.text);
      expect(await purgeLockHeld()).toBe(false);
    });

    it('stops once its time budget is spent, after a whole batch, and leaves the rest to the next run', async () => {
      await insertKeys(5_000, 'expired');
      const cut = await purgeService({ batchSize: 1_000, timeBudgetMs: 0 }).purge();
      expect(cut).toMatchObject({ deleted: 1_000, batches: 1, finished: false });
      expect(await count()).toBe(4_000);
      expect(await purgeService().purge()).toMatchObject({ deleted: 4_000, finished: true });
    });

    it('starts no batch once asked to stop (shutdown)', async () => {
      await insertKeys(10, 'expired');
      const result = await purgeService().purge(AbortSignal.abort());
      expect(result).toMatchObject({ deleted: 0, batches: 0, skipped: false, finished: false });
      expect(await count()).toBe(10);
      expect(await purgeLockHeld()).toBe(false);
    });

    it('says what it removed before a failure: those batches stay removed', async () => {
      await insertKeys(250, 'expired');
      const removeFault = await failDeletesAfter(150);
      try {
        const failure: unknown = await purgeService({ batchSize: 100 })
          .purge()
          .catch((error: unknown) => error);
        expect(failure).toBeInstanceOf(PurgeFailed);
        expect((failure as PurgeFailed).partial).toMatchObject({ deleted: 100, batches: 1, finished: false });
        expect((failure as PurgeFailed).message).toMatch(/injected purge failure/);
        expect(await count()).toBe(150);
      } finally {
        await removeFault();
      }
    });

    it('reports nothing to do on an empty table', async () => {
      expect(await purgeService().purge()).toMatchObject({ deleted: 0, batches: 1, finished: true });
    });
  });

  describe('several instances', () => {
    it('two purges started at once remove each row once, and neither fails', async () => {
      await insertKeys(50_000, 'expired');
      await insertKeys(100, 'live');
      // A second instance: its own pool on the same database.
      const mode = t.config.databasePoolMode;
      const other = new DataSource(dataSourceOptions(t.db.url, { max: 2, mode }));
      await other.initialize();
      try {
        const [a, b] = await Promise.all([
          purgeService({ batchSize: 1_000 }).purge(),
          IdempotencyPurgeService.on(other, { mode, poolSize: 2 }, { batchSize: 1_000 }).purge(),
        ]);
        expect(a.deleted + b.deleted).toBe(50_000);
        for (const skipped of [a, b].filter((r) => r.skipped)) expect(skipped.deleted).toBe(0);
        expect(await count()).toBe(100);
        expect(await purgeLockHeld()).toBe(false);
      } finally {
        await other.destroy();
      }
    });

    it('skips at once, without waiting, while another instance holds the lock', async () => {
      await insertKeys(500, 'expired');
      const holder = await t.db.pool.connect();
      try {
        await holder.query('SELECT pg_advisory_lock($1, $2)', [PURGE_LOCK.classid, PURGE_LOCK.objid]);
        // Were it to wait for the lock, this would hang: the holder lets go only after it.
        expect(await purgeService().purge()).toMatchObject({ deleted: 0, batches: 0, skipped: true });
        expect(await count()).toBe(500);
        await holder.query('SELECT pg_advisory_unlock($1, $2)', [PURGE_LOCK.classid, PURGE_LOCK.objid]);
      } finally {
        holder.release(true); // ends the session, and with it any lock it still holds
      }
      expect(await purgeService().purge()).toMatchObject({ deleted: 500, skipped: false });
    });
  });

  describe('behind a transaction pooler (each batch its own transaction under the lock)', () => {
    it("stops where it meets another instance's batch, reported as stopped early, each row deleted once", async () => {
      await insertKeys(30, 'expired');
      const holder = await t.db.pool.connect();
      const direct = databaseEnv(t.db.url).DATABASE_DIRECT_URL ?? t.db.url;
      const options = dataSourceOptions(direct, { mode: 'transaction', max: 2 });
      const dataSource = await new DataSource(options).initialize();
      let otherInstance: Promise<unknown> | null = null;
      /** After the first batch, another instance asks for the lock, and gets it when that batch commits. */
      class OtherInstanceAfterFirstBatch extends IdempotencyKeysRepository {
        override async deleteExpiredBatch(connection: Connection, limit: number): Promise<number> {
          const deleted = await super.deleteExpiredBatch(connection, limit);
          if (!otherInstance) {
            otherInstance = holder.query('SELECT pg_advisory_xact_lock($1, $2)', [
              PURGE_LOCK.classid,
              PURGE_LOCK.objid,
            ]);
            await waitForAWaiterOn(t.db.pool, PURGE_LOCK);
          }
          return deleted;
        }
      }
      try {
        await holder.query('BEGIN');
        const db = new Db(dataSource, { mode: 'transaction', poolSize: 2 });
        const purge = new IdempotencyPurgeService(db, new OtherInstanceAfterFirstBatch(db), { batchSize: 10 });
        const result = await purge.purge();
        await otherInstance;
        expect(result).toMatchObject({ deleted: 10, batches: 1, skipped: false, finished: false });
        expect(describePurge(result)).toMatch(/^Purged 10 expired idempotency keys in [\d.]+ s; stopped early/);
        expect(await count()).toBe(20);
      } finally {
        await holder.query('ROLLBACK').catch(() => undefined);
        holder.release(true);
        await dataSource.destroy();
      }
    });
  });

  describe('request traffic during a purge', () => {
    it('serves keyed creates while it runs, and keeps their keys, a reused expired key included', async () => {
      await insertKeys(200_000, 'expired');
      // An expired answer under a key a client now reuses for a new request: it is among
      // the rows being purged, and the new answer must survive the purge.
      const reused = randomUUID();
      await sql(
        `INSERT INTO idempotency_keys (merchant_id, environment, key, method, path, fingerprint,
                                       response_status, response_body, request_id, expires_at)
         VALUES ($1, 'test', $2, 'POST', '/v1/orders', '\\x01', 201, '{"old":true}', 'req_old', now() - interval '1 second')`,
        [merchant.id, reused],
      );

      let purgeEnded = false;
      const purge = purgeService({ batchSize: 500 })
        .purge()
        .finally(() => (purgeEnded = true));
      while (!(await purgeLockHeld()) && !purgeEnded) await new Promise((resolve) => setTimeout(resolve, 5));

      const requests = [randomUUID(), randomUUID(), reused].map((key) => ({ key, body: orderBody() }));
      const answers = await Promise.all(requests.map(({ key, body }) => createKeyed(key, body)));
      const answeredDuringPurge = !purgeEnded;
      const result = await purge;

      // Not queued behind the purge: every answer came while it was still deleting.
      expect(answeredDuringPurge).toBe(true);
      expect(result.skipped).toBe(false);
      for (const answer of answers) expectSuccess(answer, 201);
      expect(await count()).toBe(3);
      expect(await count(`expires_at > now() + interval '1 hour'`)).toBe(3);
      for (const [i, { key, body }] of requests.entries()) {
        const replay = await createKeyed(key, body);
        expect(replay.headers['idempotent-replayed']).toBe('true');
        expect(replay.text).toBe(answers[i].text);
      }
    });
  });

  describe('npm run purge', () => {
    const runCli = (databaseUrl: string, env: Record<string, string> = {}) =>
      promisify(execFile)(process.execPath, [CLI], {
        env: { ...process.env, ...databaseEnv(databaseUrl), LOG_LEVEL: 'silent', ...env },
      });

    it('purges once and prints how many keys it removed', async () => {
      await insertKeys(1_234, 'expired');
      await insertKeys(10, 'live');
      const { stdout } = await runCli(t.db.url);
      expect(stdout).toMatch(/^Purged 1234 expired idempotency keys in \d+\.\d s\n$/);
      expect(await count()).toBe(10);
    });

    it('says so and exits 0 when another instance is purging', async () => {
      await insertKeys(5, 'expired');
      const holder = await t.db.pool.connect();
      try {
        await holder.query('SELECT pg_advisory_lock($1, $2)', [PURGE_LOCK.classid, PURGE_LOCK.objid]);
        const { stdout } = await runCli(t.db.url);
        expect(stdout).toMatch(/^Skipped .*another instance/);
        expect(await count()).toBe(5);
      } finally {
        holder.release(true); // ends the session, and with it any lock it still holds
      }
    });

    // Behind a pooler no startup option arrives: the purge must set DATABASE_URL's own
    // settings itself, as the service does, or it would purge another schema's table.
    it("purges where DATABASE_URL's options point, behind a pooler too", async () => {
      await sql('CREATE SCHEMA kuko_other');
      try {
        await sql('CREATE TABLE kuko_other.idempotency_keys (LIKE public.idempotency_keys INCLUDING ALL)');
        await insertKeys(7, 'expired');
        await sql(
          `INSERT INTO kuko_other.idempotency_keys SELECT * FROM public.idempotency_keys WHERE key LIKE 'expired-%'`,
        );
        const url = `${t.db.url}?options=${encodeURIComponent('-c search_path=kuko_other')}`;
        // The run's databases set only the service's limits (KUKO_TEST_POOLER_ROLE_SETTINGS).
        const { stdout } = await runCli(url, { DATABASE_POOL_ROLE_SETTINGS: 'off' });
        expect(stdout).toMatch(/^Purged 7 expired/);
        expect(await count()).toBe(7);
        expect((await sql('SELECT count(*)::int AS n FROM kuko_other.idempotency_keys'))[0].n).toBe(0);
      } finally {
        await sql('DROP SCHEMA kuko_other CASCADE');
      }
    });

    it('fails with exit code 1, saying how many keys it removed before the failure', async () => {
      await insertKeys(7_000, 'expired');
      const removeFault = await failDeletesAfter(6_000);
      try {
        await expect(runCli(t.db.url)).rejects.toMatchObject({
          code: 1,
          stderr: expect.stringMatching(
            /^Purge failed after removing 5000 expired idempotency keys in \d+\.\d s: injected purge failure\n$/,
          ),
        });
        expect(await count()).toBe(2_000);
      } finally {
        await removeFault();
      }
    });

    it('says what to do on a database the migrations never ran on', async () => {
      const empty = await createTestDatabase();
      try {
        await expect(runCli(empty.url)).rejects.toMatchObject({
          code: 1,
          stderr: expect.stringMatching(
            /^Purge failed: relation "idempotency_keys" does not exist; this database has not been migrated: run npm run migration:run/,
          ),
        });
      } finally {
        await empty.drop();
      }
    });

    it('fails with exit code 1 and a message when the database is unreachable', async () => {
      const url = new URL(t.db.url);
      url.pathname = '/kuko_no_such_database';
      await expect(runCli(url.toString())).rejects.toMatchObject({
        code: 1,
        stderr: expect.stringMatching(/^Purge failed: .*kuko_no_such_database/),
      });
    });
  });

  describe('the schedule', () => {
    it('registers nothing when IDEMPOTENCY_PURGE_CRON=off', () => {
      const registry = t.app.get(SchedulerRegistry);
      expect(registry.doesExist('cron', PURGE_JOB)).toBe(false);
      expect(registry.getCronJobs().size).toBe(0);
    });

    it('registers one job on the configured schedule, whose tick purges and logs the count', async () => {
      const scheduled = await startTestApp({ IDEMPOTENCY_PURGE_CRON: '7 3 * * *' }, t.db);
      const log = jest.spyOn(Logger.prototype, 'log');
      try {
        const registry = scheduled.app.get(SchedulerRegistry);
        expect([...registry.getCronJobs().keys()]).toEqual([PURGE_JOB]);
        const job = registry.getCronJob(PURGE_JOB);
        expect(job.cronTime.source).toBe('7 3 * * *');
        expect(job.isActive).toBe(true);

        await insertKeys(300, 'expired');
        await job.fireOnTick();
        expect(await count()).toBe(0);
        expect(log).toHaveBeenCalledWith(
          expect.objectContaining({ msg: expect.stringMatching(/^Purged 300 expired/), deleted: 300, finished: true }),
        );
      } finally {
        log.mockRestore();
        await scheduled.close();
      }
    });

    it('logs and counts what a failed tick removed before it failed', async () => {
      const scheduled = await startTestApp({ IDEMPOTENCY_PURGE_CRON: '7 3 * * *' }, t.db);
      const error = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
      await insertKeys(7_000, 'expired');
      const removeFault = await failDeletesAfter(6_000);
      try {
        const before = await scrape(scheduled);
        await scheduled.app.get(SchedulerRegistry).getCronJob(PURGE_JOB).fireOnTick();
        expect(error).toHaveBeenCalledWith(
          expect.objectContaining({
            msg: expect.stringMatching(
              /^The purge of expired idempotency keys failed after removing 5000 expired idempotency keys in \d+\.\d s: injected purge failure$/,
            ),
            deleted: 5000,
          }),
        );
        const after = await scrape(scheduled);
        expect(delta(before, after, 'kukopay_idempotency_purge_deleted_rows_total')).toBe(5000);
        expect(delta(before, after, 'kukopay_idempotency_purge_runs_total{result="failed"}')).toBe(1);
      } finally {
        error.mockRestore();
        await removeFault();
        await scheduled.close();
      }
    });

    it('lets a running purge end before the application closes its pool', async () => {
      const scheduled = await startTestApp({ IDEMPOTENCY_PURGE_CRON: '7 3 * * *' }, t.db);
      const error = jest.spyOn(Logger.prototype, 'error');
      try {
        await insertKeys(100_000, 'expired');
        let ticked = false;
        const tick = scheduled.app
          .get(SchedulerRegistry)
          .getCronJob(PURGE_JOB)
          .fireOnTick()
          .finally(() => (ticked = true));
        while (!(await purgeLockHeld()) && !ticked) await new Promise((resolve) => setTimeout(resolve, 5));
        await scheduled.close();
        await tick;
        expect(error).not.toHaveBeenCalled();
        expect(await purgeLockHeld()).toBe(false);
      } finally {
        error.mockRestore();
      }
    });
  });
});
