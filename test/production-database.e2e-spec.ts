import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { Logger } from '@nestjs/common';
import { Client, type PoolClient } from 'pg';
import type { Response } from 'supertest';
import { SESSION_SETTINGS, withServerSettings } from '../src/database/data-source-options';
import { Db } from '../src/database/db';
import { runMigrations } from '../src/database/migrations';
import { SHARED_WRITE_SLOT_LOCK_CLASS } from '../src/database/advisory-locks';
import { createTestDatabase, databaseEnv, lockWaiters, testServerUrl, waitForLockWaiters } from './support/database';
import { expectError, expectSuccess } from './support/expect-error';
import { createMerchant, createOrder, createPaidOrder, orderBody, postOrder, TestMerchant } from './support/factories';
import { until } from './support/receiver';
import { startRelay } from './support/relay';
import { startServerProcess } from './support/server-process';
import { startTestApp, TestApp } from './support/test-app';
import { deliverEvent, paymentSucceeded, WEBHOOK_ENV } from './support/webhooks';
import { pgBouncerBinary, startPgBouncer } from './support/pgbouncer.cjs';

/**
 * For an app given settings in its URL: the run's databases set only the service's own
 * limits (KUKO_TEST_POOLER_ROLE_SETTINGS), so behind the pooler these are sent with each
 * transaction.
 */
const SENT_WITH_EACH_TRANSACTION = { DATABASE_POOL_ROLE_SETTINGS: 'off' };

describe('production database settings (docs/operations.md)', () => {
  describe('options given in DATABASE_URL', () => {
    it('are added to the server limits, never put in their place', () => {
      const { connectionString, options } = withServerSettings(
        'postgres://u:p@db:5432/k?options=-c%20search_path%3Dpublic&sslmode=disable',
        'session',
      );
      expect(connectionString).toBe('postgres://u:p@db:5432/k?sslmode=disable');
      expect(options).toMatch(
        /^-c lock_timeout=5s -c statement_timeout=60s -c idle_in_transaction_session_timeout=60s/,
      );
      expect(options).toMatch(/-c search_path=public$/);
    });

    const direct = process.env.KUKO_TEST_POOLER === undefined;

    // Behind a transaction pooler no startup options reach the server: Db sets them with
    // every statement instead (docs/operations.md), so this holds in both runs.
    it('apply on the live connections together with the limits', async () => {
      const t = await startTestApp();
      const url = `${t.db.url}?options=${encodeURIComponent('-c search_path=public')}`;
      let withOptions: TestApp | undefined;
      try {
        withOptions = await startTestApp(SENT_WITH_EACH_TRANSACTION, { ...t.db, url });
        const db = withOptions.app.get(Db);
        expect(await db.one('SHOW lock_timeout')).toEqual({ lock_timeout: '5s' });
        expect(await db.one('SHOW idle_in_transaction_session_timeout')).toEqual({
          idle_in_transaction_session_timeout: '1min',
        });
        expect(await db.one('SHOW search_path')).toEqual({ search_path: 'public' });
        const inTransaction = await db.transaction('test', () => db.one('SHOW search_path'));
        expect(inTransaction).toEqual({ search_path: 'public' });
      } finally {
        await withOptions?.app.close();
        await t.close();
      }
    });

    // Only a pooler drops startup options: the check that catches it is run in the pooler run.
    (direct ? it.skip : it)('stop the start-up when a pooler dropped them, naming DATABASE_POOL_MODE', async () => {
      const t = await startTestApp();
      try {
        await expect(
          startTestApp(
            {
              DATABASE_POOL_MODE: 'session',
              DATABASE_POOL_PREPARED_STATEMENTS: 'off',
              DATABASE_POOL_ROLE_SETTINGS: 'off',
            },
            t.db,
          ),
        ).rejects.toThrow(
          /did not receive the connection's startup options \(idle_in_transaction_session_timeout, lock_timeout, statement_timeout not set\).*DATABASE_POOL_MODE=transaction/,
        );
      } finally {
        await t.close();
      }
    });

    // Where the run's pooler keeps prepared statements, every app of the run starts with it on.
    (process.env.KUKO_TEST_POOLER_PREPARED === 'on' ? it.skip : it)(
      'stop the start-up when DATABASE_POOL_PREPARED_STATEMENTS=on and nothing keeps them',
      async () => {
        const t = await startTestApp();
        try {
          const env = {
            DATABASE_POOL_MODE: 'transaction',
            DATABASE_POOL_PREPARED_STATEMENTS: 'on',
            DATABASE_DIRECT_URL: databaseEnv(t.db.url).DATABASE_DIRECT_URL ?? t.db.url,
          };
          // A refused setup stays refused: it is not tried again (each try would be a warning).
          const logged = jest.spyOn(Logger.prototype, 'warn');
          await expect(startTestApp(env, t.db)).rejects.toThrow(
            /DATABASE_POOL_PREPARED_STATEMENTS=on, but DATABASE_URL passes prepared statements through.*PgBouncer 1\.21/,
          );
          expect(logged.mock.calls.map(([message]) => String(message)).filter((m) => /trying again/.test(m))).toEqual(
            [],
          );
        } finally {
          jest.restoreAllMocks();
          await t.close();
        }
      },
    );

    it('refuse what is not a setting, naming DATABASE_URL', async () => {
      const t = await startTestApp();
      try {
        const url = `${t.db.url}?options=${encodeURIComponent('--single')}`;
        await expect(
          startTestApp({ DATABASE_POOL_MODE: 'transaction', DATABASE_DIRECT_URL: url }, { ...t.db, url }),
        ).rejects.toThrow(/DATABASE_URL.*-c name=value/);
      } finally {
        await t.close();
      }
    });
  });

  describe('limits set on the role behind a transaction pooler (DATABASE_POOL_ROLE_SETTINGS)', () => {
    /** A fresh database whose own settings are `settings`, set before anything connects to it. */
    async function databaseSetting(settings: Readonly<Record<string, string>>) {
      const db = await createTestDatabase(testServerUrl(), { settings });
      const direct = databaseEnv(db.url).DATABASE_DIRECT_URL ?? db.url;
      return {
        db,
        env: { DATABASE_POOL_MODE: 'transaction', DATABASE_POOL_ROLE_SETTINGS: 'on', DATABASE_DIRECT_URL: direct },
      };
    }
    const source = (db: Db) => db.one<{ source: string }>("SELECT source FROM pg_settings WHERE name = 'lock_timeout'");

    it('are not sent with any statement, and still bound waits on a lock: 503, nothing stored', async () => {
      const { db, env } = await databaseSetting({
        lock_timeout: '1s',
        statement_timeout: '60s',
        idle_in_transaction_session_timeout: '60s',
      });
      const url = `${db.url}?options=${encodeURIComponent('-c lock_timeout=1s')}`;
      const t = await startTestApp(env, { ...db, url });
      const holder = await db.pool.connect();
      try {
        const app = t.app.get(Db);
        // Set by the database, not by a statement of the service, in and outside a transaction.
        expect(await source(app)).toEqual({ source: 'database' });
        expect(await app.transaction('test', () => source(app))).toEqual({ source: 'database' });
        expect(await app.one('SHOW lock_timeout')).toEqual({ lock_timeout: '1s' });

        const merchant = await createMerchant(t, 'Role limits');
        await holder.query('BEGIN');
        await holder.query('LOCK TABLE orders IN ACCESS EXCLUSIVE MODE');
        const [keyed, unkeyed] = await Promise.all([
          postOrder(t, merchant.testKey, orderBody(), randomUUID()),
          t.http().post('/v1/orders').set('X-Api-Key', merchant.testKey).send(orderBody()),
        ]);
        for (const response of [keyed, unkeyed]) expectError(response, 503, 'service_unavailable');
        await holder.query('ROLLBACK');
        expectSuccess(await postOrder(t, merchant.testKey, orderBody(), randomUUID()), 201);
        const orders = await db.pool.query('SELECT count(*)::int AS n FROM orders');
        expect(orders.rows[0].n).toBe(1);
      } finally {
        await holder.query('ROLLBACK').catch(() => undefined);
        holder.release();
        await t.close();
        await db.drop();
      }
    });

    it('stop the start-up when the role does not set one of them, naming what to run', async () => {
      const { db, env } = await databaseSetting({ lock_timeout: '5s', statement_timeout: '60s' });
      try {
        await expect(startTestApp(env, db)).rejects.toThrow(
          /DATABASE_POOL_ROLE_SETTINGS=on, but the role does not set idle_in_transaction_session_timeout \(0 here, the service runs with 1min\): run ALTER ROLE "[^"]+" SET idle_in_transaction_session_timeout = '1min', then .*RECONNECT/,
        );
      } finally {
        await db.drop();
      }
    });

    it("stop the start-up on a setting PostgreSQL does not know, naming DATABASE_URL's options", async () => {
      const { db, env } = await databaseSetting(SESSION_SETTINGS);
      try {
        const url = `${db.url}?options=${encodeURIComponent('-c lock_timeot=1s')}`;
        await expect(startTestApp(env, { ...db, url })).rejects.toThrow(
          /DATABASE_URL: PostgreSQL refused its options \(unrecognized configuration parameter "lock_timeot"\)/,
        );
      } finally {
        await db.drop();
      }
    });
  });

  // After a failover, an instance still connected to the old primary, now a standby: every
  // write answered 500 internal_error while /health/ready said 200.
  describe('a database that turns read-only', () => {
    it('answers writes 503 with nothing stored, and is not ready until it takes writes again', async () => {
      const t = await startTestApp();
      const merchant = await createMerchant(t, 'Read-only');
      // Its own session, opened before the database turns read-only, on the server itself.
      const direct = new URL(testServerUrl());
      direct.pathname = new URL(t.db.url).pathname;
      const admin = new Client({ connectionString: direct.toString() });
      await admin.connect();
      const name = direct.pathname.slice(1);
      const sessionsEnd = () =>
        admin.query(
          'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
        );
      try {
        await admin.query(`ALTER DATABASE ${name} SET default_transaction_read_only = on`);
        await sessionsEnd();
        const key = randomUUID();
        const body = orderBody();
        const refused = await postOrder(t, merchant.testKey, body, key);
        expectError(refused, 503, 'service_unavailable');
        expect(refused.headers['retry-after']).toBeDefined();
        // Once the sessions ended before are gone from the pool, the answer says why.
        await until(
          async () => (await postOrder(t, merchant.testKey, body, key)).body.message?.includes('read-only') === true,
        );
        // Once the sessions ended before are gone from the pool: read-only, not lost.
        await until(async () => JSON.stringify((await t.http().get('/health/ready')).body).includes('is read-only'));
        expect((await t.http().get('/health/ready')).status).toBe(503);

        // Back without ending its sessions: those opened while it was read-only stay so, and
        // are ended as they refuse a write or say so to the readiness check. Behind a
        // pooler they are its server connections, which only it can renew (RECONNECT,
        // server_lifetime; docs/operations.md): ended here as an operator would have it do.
        await admin.query(`ALTER DATABASE ${name} RESET default_transaction_read_only`);
        if (databaseEnv(t.db.url).DATABASE_POOL_MODE === 'transaction') await sessionsEnd();
        await until(async () => (await t.http().get('/health/ready')).status === 200, 5000);
        // Nothing was stored under the key: its retry runs, on a session that takes writes
        // (one still read-only answers 503 once more, and is ended).
        await until(async () => (await postOrder(t, merchant.testKey, body, key)).status === 201, 5000);
        expect((await postOrder(t, merchant.testKey, body, key)).headers['idempotent-replayed']).toBe('true');
      } finally {
        await admin.query(`ALTER DATABASE ${name} RESET default_transaction_read_only`).catch(() => undefined);
        await admin.end();
        await t.close();
      }
    });
  });

  describe('DATABASE_DIRECT_URL beside DATABASE_URL', () => {
    /** The test database's own URL on the server, whatever the run puts in front of it. */
    const directUrlOf = (database: { url: string }) => {
      const url = new URL(testServerUrl());
      url.pathname = new URL(database.url).pathname;
      return url.toString();
    };
    const refusal = (found: string) =>
      new RegExp(
        `^DATABASE_URL and DATABASE_DIRECT_URL must reach the same tables: the migrations ran through DATABASE_DIRECT_URL in database "kuko_t_\\w+" \\(search_path [^)]+\\), and DATABASE_URL's requests find ${found} in database "kuko_t_\\w+"`,
      );

    const tablesIn = async (url: string) => {
      const client = new Client({ connectionString: url });
      await client.connect();
      try {
        const { rows } = await client.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')`,
        );
        return rows[0].n;
      } finally {
        await client.end();
      }
    };
    const twoDatabases = new RegExp(
      `^DATABASE_URL and DATABASE_DIRECT_URL must reach the same database: the migrations would run through DATABASE_DIRECT_URL in database "kuko_t_\\w+" \\(search_path [^)]+\\), and DATABASE_URL's requests reach database "kuko_t_\\w+" \\(search_path [^)]+\\); nothing was migrated; point both at the same database`,
    );

    // The migrations ran first, and created every table in the database the requests never use.
    it('stop the start-up when they reach two databases, migrated or not, before migrating either', async () => {
      const [requests, migrations] = [await createTestDatabase(), await createTestDatabase()];
      try {
        const env = { ...SENT_WITH_EACH_TRANSACTION, DATABASE_DIRECT_URL: directUrlOf(migrations) };
        await expect(startTestApp(env, requests)).rejects.toThrow(twoDatabases);
        // Read directly: a pooler would keep a server connection to it, which a copy below refuses.
        expect(await tablesIn(directUrlOf(migrations))).toBe(0);
        expect(await tablesIn(directUrlOf(requests))).toBe(0);
        // Both migrated, as by two earlier deployments: still two sets of tables.
        await (await startTestApp({}, requests)).close();
        await expect(startTestApp(env, requests)).rejects.toThrow(twoDatabases);
        // A copy of the migrations' database (CREATE DATABASE … TEMPLATE): the same table oids.
        // Migrated directly: a pooler would keep server connections to it, which a copy refuses.
        const original = new URL(directUrlOf(migrations)).pathname.slice(1);
        await runMigrations(directUrlOf(migrations));
        await requests.pool.query(`CREATE DATABASE ${original}_copy TEMPLATE ${original}`);
        try {
          const copy = new URL(requests.url);
          copy.pathname = `/${original}_copy`;
          await expect(startTestApp(env, { ...requests, url: copy.toString() })).rejects.toThrow(twoDatabases);
        } finally {
          await requests.pool.query(`DROP DATABASE IF EXISTS ${original}_copy WITH (FORCE)`);
        }
      } finally {
        await requests.drop();
        await migrations.drop();
      }
    });

    it("stop the start-up when DATABASE_URL's options give requests another search_path than the migrations'", async () => {
      const database = await createTestDatabase();
      try {
        await database.pool.query('CREATE SCHEMA app');
        const url = `${database.url}?options=${encodeURIComponent('-c search_path=app')}`;
        const env = { ...SENT_WITH_EACH_TRANSACTION, DATABASE_DIRECT_URL: directUrlOf(database) };
        await expect(startTestApp(env, { ...database, url })).rejects.toThrow(refusal('no orders table'));
        // The same options on both: migrations and requests share the schema, and it serves.
        const both = `${directUrlOf(database)}?options=${encodeURIComponent('-c search_path=app')}`;
        const t = await startTestApp({ ...env, DATABASE_DIRECT_URL: both }, { ...database, url });
        try {
          expectSuccess(await t.http().get('/health/ready'), 200);
          await createMerchant(t, 'In app');
        } finally {
          await t.close();
        }
      } finally {
        await database.drop();
      }
    });
  });

  it('keeps serving through a migration that changes what prepared statements return: planned afresh', async () => {
    const t = await startTestApp();
    try {
      const merchant = await createMerchant(t, 'Migrating');
      const keyed = (key: string, body: object) => postOrder(t, merchant.testKey, body, key);
      const unkeyed = () => postOrder(t, merchant.testKey, orderBody());
      // Every statement prepared on several connections of the pool.
      const warm = await Promise.all([
        ...Array.from({ length: 8 }, () => keyed(randomUUID(), orderBody())),
        ...Array.from({ length: 8 }, unkeyed),
      ]);
      expect(warm.map((response) => response.status)).toEqual(Array(16).fill(201));

      // A column in the order statements' results and one in the stored answers' change type.
      await t.db.pool.query('ALTER TABLE orders ALTER COLUMN description TYPE varchar(2000)');
      await t.db.pool.query('ALTER TABLE idempotency_keys ALTER COLUMN request_id TYPE varchar(200)');

      const bodies = Array.from({ length: 8 }, () => ({ key: randomUUID(), body: orderBody() }));
      const after = await Promise.all([
        ...bodies.map(({ key, body }) => keyed(key, body)),
        ...Array.from({ length: 8 }, unkeyed),
      ]);
      expect(after.map((response) => response.status)).toEqual(Array(16).fill(201));
      // A second migration, whose plans the first one's replanning has cached by now.
      await t.db.pool.query('ALTER TABLE orders ALTER COLUMN description TYPE text');
      const again = await Promise.all([
        ...Array.from({ length: 8 }, () => keyed(randomUUID(), orderBody())),
        ...Array.from({ length: 8 }, unkeyed),
      ]);
      expect(again.map((response) => response.status)).toEqual(Array(16).fill(201));
      const listed = await t.http().get('/v1/orders?limit=100').set('X-Api-Key', merchant.testKey);
      expect(listed.status).toBe(200);
      expect(listed.body.data).toHaveLength(48);
      // Each key still answers its one order.
      const replays = await Promise.all(bodies.map(({ key, body }) => keyed(key, body)));
      replays.forEach((replay, index) => {
        expect(replay.headers['idempotent-replayed']).toBe('true');
        expect(replay.body.data.id).toBe(after[index].body.data.id);
      });
    } finally {
      await t.close();
    }
  });

  it('bounds reads and writes outside any transaction by lock_timeout, also one set in the URL: 503, nothing stored', async () => {
    const t = await startTestApp();
    const url = `${t.db.url}?options=${encodeURIComponent('-c lock_timeout=1s')}`;
    let app: TestApp | undefined;
    const holder = await t.db.pool.connect();
    try {
      app = await startTestApp(SENT_WITH_EACH_TRANSACTION, { ...t.db, url });
      // The URL's own lock_timeout wins over the service's 5 s, with or without the pooler.
      expect(await app.app.get(Db).one('SHOW lock_timeout')).toEqual({ lock_timeout: '1s' });
      const merchant = await createMerchant(app, 'Waiting');
      // A migration or an operator's ALTER TABLE holding the table: without a limit, the
      // unkeyed create and the list below would wait for as long as it is held.
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE orders IN ACCESS EXCLUSIVE MODE');
      const [created, listed] = await Promise.all([
        app.http().post('/v1/orders').set('X-Api-Key', merchant.testKey).send(orderBody()),
        app.http().get('/v1/orders').set('X-Api-Key', merchant.testKey),
      ]);
      for (const response of [created, listed]) {
        expectError(response, 503, 'service_unavailable');
        expect(response.headers['retry-after']).toBe('1');
      }
      await holder.query('ROLLBACK');
      const orders = await t.db.pool.query('SELECT count(*)::int AS n FROM orders');
      expect(orders.rows[0].n).toBe(0);
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      holder.release();
      await app?.close();
      await t.close();
    }
  });

  it('lets hot orders starve no other merchant, and answers their queued writes 503, storing nothing', async () => {
    // 8 connections: 6 write slots; a tenant may hold 4, the last 2 are kept for tenants holding none.
    const t = await startTestApp({ ...WEBHOOK_ENV, DATABASE_POOL_SIZE: '8' });
    const holder = await t.db.pool.connect();
    try {
      const [hot, busy, other] = [
        await createMerchant(t, 'Hot'),
        await createMerchant(t, 'Busy'),
        await createMerchant(t, 'Other'),
      ];
      const order = await createPaidOrder(t, hot.testKey);
      const busyOrder = await createPaidOrder(t, busy.testKey);
      const othersOrder = await createPaidOrder(t, other.testKey);
      // Row locks held far longer than lock_timeout, as a stuck transaction would.
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM orders WHERE id = ANY($1) FOR UPDATE', [[order.id, busyOrder.id]]);

      const keys = Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? randomUUID() : null));
      const refunds = keys.map((key) => {
        const request = t.http().post('/v1/refunds').set('X-Api-Key', hot.testKey);
        if (key) request.set('Idempotency-Key', key);
        return request.send({ order_id: order.id, amount: 10 });
      });
      // A second merchant's refunds queue on its own hot order.
      const busyRefunds = Array.from({ length: 6 }, () =>
        t.http().post('/v1/refunds').set('X-Api-Key', busy.testKey).send({ order_id: busyOrder.id, amount: 10 }),
      );
      const answered = Promise.all([...refunds, ...busyRefunds]);
      await waitForLockWaiters(t.db.pool, 5);

      // The hot merchant's share (4) and one slot of the busy one's wait on their rows,
      // the rest of their refunds wait for slots: other merchants still read and write, at once.
      const started = Date.now();
      const list = await t.http().get('/v1/orders').set('X-Api-Key', other.testKey);
      expectSuccess(list, 200);
      const othersRefund = await t
        .http()
        .post('/v1/refunds')
        .set('X-Api-Key', other.testKey)
        .set('Idempotency-Key', randomUUID())
        .send({ order_id: othersOrder.id, amount: 10 });
      expectSuccess(othersRefund, 201);
      const othersClose = await t
        .http()
        .post(`/v1/orders/${(await createOrder(t, other.testKey)).id}/close`)
        .set('X-Api-Key', other.testKey);
      expectSuccess(othersClose, 200);
      // Without the share they waited for a slot until the hot refunds' lock_timeout (5 s).
      expect(Date.now() - started).toBeLessThan(2500);
      expect(await lockWaiters(t.db.pool)).toBe(5);

      for (const response of await answered) {
        expectError(response, 503, 'service_unavailable');
        expect(response.headers['retry-after']).toBe('1');
      }
      await holder.query('ROLLBACK');
      const stored = await t.db.pool.query('SELECT merchant_id FROM idempotency_keys');
      expect(stored.rows).toEqual([{ merchant_id: other.id }]);
      const refunded = await t.db.pool.query('SELECT amount_refunded::int AS n FROM orders WHERE id = $1', [order.id]);
      expect(refunded.rows[0].n).toBe(0);

      // The lock gone, the same keyed request now executes.
      const retry = await t
        .http()
        .post('/v1/refunds')
        .set('X-Api-Key', hot.testKey)
        .set('Idempotency-Key', keys[0]!)
        .send({ order_id: order.id, amount: 10 });
      expectSuccess(retry, 201);
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      holder.release();
      await t.close();
    }
  }, 60_000);

  // Two instances of 12 connections (9 write slots, a tenant's share 6) behind a PgBouncer
  // lending 12 server connections: without a share across instances, one merchant's writes
  // queued on its locked rows pinned all 12, and every other merchant's request waited in
  // PgBouncer until their lock_timeout (8 s here, so that the six holding slots outlast
  // every step of a test).
  (pgBouncerInstalled() ? describe : describe.skip)(
    'two instances behind a PgBouncer lending fewer connections than they have',
    () => {
      let db: Awaited<ReturnType<typeof createTestDatabase>>;
      let bouncer: Awaited<ReturnType<typeof startPgBouncer>>;
      let one: TestApp;
      let two: TestApp;
      let holder: PoolClient;
      let hot: TestMerchant;
      let other: TestMerchant;

      beforeEach(async () => {
        db = await createTestDatabase();
        const direct = new URL(testServerUrl());
        direct.pathname = new URL(db.url).pathname;
        bouncer = await startPgBouncer(direct.toString(), { poolSize: 12 });
        const pooledUrl = new URL(bouncer.url);
        pooledUrl.searchParams.set('options', '-c lock_timeout=8s');
        const env = {
          ...WEBHOOK_ENV,
          DATABASE_POOL_MODE: 'transaction',
          DATABASE_DIRECT_URL: direct.toString(),
          DATABASE_POOL_ROLE_SETTINGS: 'off',
          DATABASE_POOL_SIZE: '12',
          // Where it keeps prepared statements, the claim is also refused inside a pipeline.
          ...(bouncer.prepared ? { DATABASE_POOL_PREPARED_STATEMENTS: 'on' } : {}),
        };
        const pooled = { ...db, url: pooledUrl.toString() };
        one = await startTestApp(env, pooled);
        two = await startTestApp(env, pooled);
        [hot, other] = [await createMerchant(one, 'Hot'), await createMerchant(one, 'Other')];
        holder = await db.pool.connect();
        await holder.query('BEGIN');
      });

      afterEach(async () => {
        await holder.query('ROLLBACK').catch(() => undefined);
        holder.release();
        await one.close();
        await two.close();
        await bouncer.stop();
        await db.drop();
      });

      /** The shared slots held in this test's database (pg_locks holds every database's). */
      async function sharedSlotsHeld(): Promise<number> {
        const { rows } = await db.pool.query(
          `SELECT count(*)::int AS n FROM pg_locks JOIN pg_database d ON d.oid = pg_locks.database
          WHERE d.datname = current_database() AND locktype = 'advisory' AND classid = $1 AND granted`,
          [SHARED_WRITE_SLOT_LOCK_CLASS],
        );
        return rows[0].n;
      }

      /** The other merchant reads and creates through either instance at once. */
      async function expectOtherServedAtOnce(): Promise<void> {
        const started = Date.now();
        for (const instance of [one, two]) {
          expectSuccess(await instance.http().get('/v1/orders').set('X-Api-Key', other.testKey), 200);
          expectSuccess(
            await instance.http().post('/v1/orders').set('X-Api-Key', other.testKey).send(orderBody()),
            201,
          );
        }
        expect(Date.now() - started).toBeLessThan(2500);
      }

      it("lets one merchant's refunds and the provider's events about its locked order pin one instance's share", async () => {
        const order = await createPaidOrder(one, hot.testKey);
        const others = [await createOrder(one, hot.testKey), await createOrder(one, hot.testKey)];
        await holder.query('SELECT 1 FROM orders WHERE id = $1 FOR UPDATE', [order.id]);
        // Sent at once (a supertest request goes only when something awaits it).
        const refund = (instance: TestApp, key: string): Promise<Response> =>
          Promise.resolve(
            instance
              .http()
              .post('/v1/refunds')
              .set('X-Api-Key', hot.testKey)
              .set('Idempotency-Key', key)
              .send({ order_id: order.id, amount: 10 }),
          );
        // Six through the first instance take the merchant's six shared slots.
        const keys = Array.from({ length: 6 }, () => randomUUID());
        const first = keys.map((key) => refund(one, key));
        await waitForLockWaiters(db.pool, 6);
        // A twin of one of them through the second instance, whose own slots are free, is
        // answered 409 at once rather than waiting for a shared slot.
        const twinStarted = Date.now();
        expectError(await refund(two, keys[0]!), 409, 'idempotency_in_progress', 'Idempotency-Key');
        expect(Date.now() - twinStarted).toBeLessThan(2500);
        // More refunds through both, and payments of the order through the second: the
        // provider's events about it wait among its merchant's slots.
        const more = [one, two].flatMap((instance) => Array.from({ length: 4 }, () => refund(instance, randomUUID())));
        const events = Array.from({ length: 4 }, () =>
          Promise.resolve(deliverEvent(two, paymentSucceeded(order.id, { amount: order.amount }))),
        );
        const answered = Promise.all([...first, ...more, ...events]);
        // Time for more to arrive, were they let through.
        await new Promise((resolve) => setTimeout(resolve, 500));
        // The merchant's six, and two for the events about the order (applied one at a time anyway).
        expect({ waiting: await lockWaiters(db.pool), slots: await sharedSlotsHeld() }).toEqual({
          waiting: 8,
          slots: 8,
        });
        // A payment of another of its orders is applied at once, through either instance.
        for (const [instance, another] of [
          [one, others[0]!],
          [two, others[1]!],
        ] as const) {
          const paid = await deliverEvent(instance, paymentSucceeded(another.id, { amount: another.amount }));
          expect(paid.body.data.status).toBe('processed');
        }
        await expectOtherServedAtOnce();

        for (const response of await answered) {
          expectError(
            response,
            503,
            response.body.error === 'resource_not_ready' ? 'resource_not_ready' : 'service_unavailable',
          );
          expect(response.headers['retry-after']).toBeDefined();
        }
        await holder.query('ROLLBACK');
        const refunded = await db.pool.query('SELECT amount_refunded::int AS n FROM orders WHERE id = $1', [order.id]);
        expect(refunded.rows[0].n).toBe(0);
        expect(await sharedSlotsHeld()).toBe(0);
        // Every slot was given back with its transaction: the merchant writes again.
        const retry = await one
          .http()
          .post('/v1/refunds')
          .set('X-Api-Key', hot.testKey)
          .send({ order_id: order.id, amount: 10 });
        expectSuccess(retry, 201);
      }, 60_000);
    },
  );

  it("lets a locked order's webhook deliveries hold up no other merchant's payments", async () => {
    // 8 connections: 6 write slots; a tenant may hold 4, the last 2 are kept for tenants holding none.
    const t = await startTestApp({ ...WEBHOOK_ENV, DATABASE_POOL_SIZE: '8' });
    const holder = await t.db.pool.connect();
    try {
      const [hot, other] = [await createMerchant(t, 'Hot'), await createMerchant(t, 'Other')];
      const hotOrder = await createOrder(t, hot.testKey);
      const othersOrders = [await createOrder(t, other.testKey), await createOrder(t, other.testKey)];
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM orders WHERE id = $1 FOR UPDATE', [hotOrder.id]);

      // The provider retries, and sends again under new event ids, while the row stays locked.
      let hotAnswered = 0;
      const hotDeliveries = Array.from({ length: 4 }, () => paymentSucceeded(hotOrder.id));
      const queued = Promise.all(
        hotDeliveries.map(async (event) => {
          const response = await deliverEvent(t, event);
          hotAnswered += 1;
          return response;
        }),
      );
      // Behind a transaction pooler the events about one order hold two slots across all
      // instances (shared slots); the other two wait without a connection.
      await waitForLockWaiters(t.db.pool, t.config.databasePoolMode === 'transaction' ? 2 : 4);

      // The deliveries for one order are one tenant, with one tenant's share: the other
      // merchant's payments are applied at once, not after the hot ones time out.
      for (const order of othersOrders) {
        const response = await deliverEvent(t, paymentSucceeded(order.id));
        expectSuccess(response, 200);
        expect(response.body.data.status).toBe('processed');
      }
      expect(hotAnswered).toBe(0);

      for (const response of await queued) expectError(response, 503, 'service_unavailable');
      await holder.query('ROLLBACK');
      const recorded = await t.db.pool.query('SELECT count(*)::int AS n FROM webhook_events WHERE event_id = ANY($1)', [
        hotDeliveries.map((event) => event.id),
      ]);
      expect(recorded.rows[0].n).toBe(0);
      const retried = await deliverEvent(t, hotDeliveries[0]!);
      expect(retried.body.data.status).toBe('processed');
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      holder.release();
      await t.close();
    }
  }, 60_000);

  it("lets no merchant's creates, queued on an uncommitted order, take the connections others need", async () => {
    const t = await startTestApp({ DATABASE_POOL_SIZE: '8' });
    const holder = await t.db.pool.connect();
    try {
      const [hot, other] = [await createMerchant(t, 'Hot'), await createMerchant(t, 'Other')];
      // Another instance's create of the same out_trade_no, not committed yet.
      await holder.query('BEGIN');
      await holder.query(
        `INSERT INTO orders (id, merchant_id, environment, out_trade_no, amount, currency, subject)
         VALUES ('ord_uncommitted', $1, 'test', 'HELD', 2990, 'USD', 'Held')`,
        [hot.id],
      );
      const creates = Array.from({ length: 12 }, () =>
        t
          .http()
          .post('/v1/orders')
          .set('X-Api-Key', hot.testKey)
          .send(orderBody({ out_trade_no: 'HELD' })),
      );
      const answered = Promise.all(creates);
      await waitForLockWaiters(t.db.pool, 4);

      // Unkeyed creates run in autocommit, yet wait within the merchant's share of slots.
      const started = Date.now();
      expectSuccess(await t.http().get('/v1/orders').set('X-Api-Key', other.testKey), 200);
      expectSuccess(await t.http().post('/v1/orders').set('X-Api-Key', other.testKey).send(orderBody()), 201);
      expect(Date.now() - started).toBeLessThan(2500);
      expect(await lockWaiters(t.db.pool)).toBe(4);

      await holder.query('ROLLBACK');
      const answers = await answered;
      // One create made the order; the eleven others found it (docs/idempotency.md, "Business keys").
      expect(answers.map((answer) => answer.status).sort()).toEqual([...Array(11).fill(200), 201]);
      expect(new Set(answers.map((answer) => answer.body.data.id)).size).toBe(1);
      const { rows } = await t.db.pool.query(`SELECT count(*)::int AS n FROM orders WHERE out_trade_no = 'HELD'`);
      expect(rows[0].n).toBe(1);
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      holder.release();
      await t.close();
    }
  }, 60_000);

  it('answers 503 when the database stops answering on a connection already lent, and /metrics still answers', async () => {
    const t = await startTestApp();
    const relay = await startRelay(new URL(t.db.url));
    // A statement_timeout of 1 s puts the client's own limit on an answer at 6 s.
    const url = new URL(t.db.url);
    url.host = `127.0.0.1:${relay.port}`;
    url.searchParams.set('options', '-c statement_timeout=1s');
    let app: TestApp | undefined;
    try {
      const env = { ...databaseEnv(t.db.url), ...SENT_WITH_EACH_TRANSACTION, DATABASE_URL: url.toString() };
      app = await startTestApp(env, { ...t.db, url: url.toString() });
      const merchant = await createMerchant(app, 'Frozen');
      // The pool now holds an idle connection, which the next request is lent.
      expectSuccess(await app.http().get('/v1/orders').set('X-Api-Key', merchant.testKey), 200);
      relay.freeze();
      const started = Date.now();
      const [listed, created, metrics] = await Promise.all([
        app.http().get('/v1/orders').set('X-Api-Key', merchant.testKey),
        postOrder(app, merchant.testKey, orderBody(), randomUUID()),
        // Timed on its own: the scrape waits 2 s at most for its database gauges, well
        // before either limit above would end its query.
        app
          .http()
          .get('/metrics')
          .then((response) => ({ response, afterMs: Date.now() - started })),
      ]);
      // One waited on the connection it was lent (the client's limit), the other for a
      // new connection (the pool's 5 s); neither for ever.
      for (const response of [listed, created]) {
        expectError(response, 503, 'service_unavailable');
        expect(response.headers['retry-after']).toBe('1');
      }
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(metrics.response.status).toBe(200);
      expect(metrics.afterMs).toBeLessThan(4_000);
      expect(metrics.response.text).toMatch(/^kukopay_db_pool_waiting_clients \d+$/m);
      relay.thaw();
      // The connections that waited were ended, not lent again: the next request is served.
      expectSuccess(await app.http().get('/v1/orders').set('X-Api-Key', merchant.testKey), 200);
      const orders = await t.db.pool.query('SELECT count(*)::int AS n FROM orders');
      expect(orders.rows[0].n).toBe(0);
    } finally {
      relay.thaw();
      await app?.close();
      await relay.close();
      await t.close();
    }
  });

  it('exits within SHUTDOWN_TIMEOUT_MS of SIGTERM even while clients trickle requests in', async () => {
    const t = await startTestApp();
    const server = await startServerProcess({
      DATABASE_URL: t.db.url,
      SHUTDOWN_TIMEOUT_MS: '1500',
      REQUEST_TIMEOUT_MS: '120000',
    });
    const port = Number(new URL(server.url).port);
    const sockets = Array.from({ length: 5 }, () => {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      socket.write(
        'POST /v1/orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{',
      );
      return socket;
    });
    try {
      await new Promise((pause) => setTimeout(pause, 300));
      server.child.kill('SIGTERM');
      const exited = await Promise.race([
        server.exited.then(() => 'exited'),
        new Promise((resolve) => setTimeout(() => resolve('still running'), 20_000)),
      ]);
      expect(exited).toBe('exited');
      expect(server.stdout.join('\n')).toContain('SHUTDOWN_TIMEOUT_MS');
    } finally {
      for (const socket of sockets) socket.destroy();
      await server.kill();
      await t.close();
    }
  });
});

/** Whether a PgBouncer can be started here (`pgbouncer` on the PATH, or KUKO_PGBOUNCER). */
function pgBouncerInstalled(): boolean {
  try {
    pgBouncerBinary();
    return true;
  } catch {
    return false;
  }
}
