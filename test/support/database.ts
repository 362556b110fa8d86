import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client, Pool } from 'pg';
import { SESSION_SETTINGS } from '../../src/database/data-source-options';

interface TestServer {
  url: string;
  /** A PgBouncer in transaction pooling mode in front of it, when the run goes through one. */
  poolerUrl: string | null;
  /** Whether that PgBouncer keeps prepared statements (version 1.21 and later). */
  poolerPrepared?: boolean;
}

function testServer(): TestServer {
  if (process.env.KUKO_TEST_SERVER_URL) {
    return {
      url: process.env.KUKO_TEST_SERVER_URL,
      poolerUrl: process.env.KUKO_TEST_POOLER_URL ?? null,
      poolerPrepared: process.env.KUKO_TEST_POOLER_PREPARED === 'on',
    };
  }
  return JSON.parse(readFileSync(join(process.cwd(), '.data', 'test-server.json'), 'utf8'));
}

/** The PostgreSQL server of this test run (see global-setup.mjs). */
export function testServerUrl(): string {
  return testServer().url;
}

/**
 * What an application needs to reach a test database as the run does: through the
 * pooler (with its mode and a direct URL for migrations) when there is one.
 */
export function databaseEnv(url: string): Record<string, string> {
  const { url: direct, poolerUrl, poolerPrepared } = testServer();
  if (!poolerUrl || new URL(url).port !== new URL(poolerUrl).port) return { DATABASE_URL: url };
  const directUrl = new URL(url);
  directUrl.host = new URL(direct).host;
  return {
    DATABASE_URL: url,
    DATABASE_POOL_MODE: 'transaction',
    ...(poolerPrepared ? { DATABASE_POOL_PREPARED_STATEMENTS: 'on' } : {}),
    ...(limitsOnDatabase() ? { DATABASE_POOL_ROLE_SETTINGS: 'on' } : {}),
    DATABASE_DIRECT_URL: directUrl.toString(),
  };
}

export interface TestDatabase {
  /** What the application connects to: through the pooler when the run has one. */
  url: string;
  /** For assertions on the rows behind the answers. */
  pool: Pool;
  drop(): Promise<void>;
}

/**
 * KUKO_TEST_POOLER_ROLE_SETTINGS=on: behind the pooler, each test database sets the
 * service's limits itself, and the applications send none (DATABASE_POOL_ROLE_SETTINGS).
 */
function limitsOnDatabase(): boolean {
  return process.env.KUKO_TEST_POOLER_ROLE_SETTINGS === 'on' && testServer().poolerUrl !== null;
}

/**
 * A fresh, empty database for one test file; migrations run when the app starts.
 * `settings` become the database's own (ALTER DATABASE … SET), in force on every
 * connection opened to it: the service's limits where the run sets them there.
 */
export async function createTestDatabase(
  serverUrl = testServerUrl(),
  { settings = limitsOnDatabase() ? SESSION_SETTINGS : {} }: { settings?: Readonly<Record<string, string>> } = {},
): Promise<TestDatabase> {
  const name = `kuko_t_${randomBytes(6).toString('hex')}`;
  await admin(serverUrl, `CREATE DATABASE ${name}`);
  for (const [setting, value] of Object.entries(settings)) {
    await admin(serverUrl, `ALTER DATABASE ${name} SET ${setting} = '${value}'`);
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const { poolerUrl } = testServer();
  const appUrl = poolerUrl && serverUrl === testServerUrl() ? new URL(poolerUrl) : new URL(url);
  appUrl.pathname = `/${name}`;
  // The tests' own connections go directly to the server: their session locks must stay theirs.
  const pool = new Pool({ connectionString: url.toString(), max: 4 });
  // Tests terminate backends and force-drop databases on purpose; an idle client that
  // this ends must not take the test process down with an unhandled 'error' event.
  pool.on('error', () => undefined);
  return {
    url: appUrl.toString(),
    pool,
    drop: async () => {
      await pool.end();
      await admin(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

async function admin(serverUrl: string, sql: string): Promise<void> {
  const url = new URL(serverUrl);
  url.pathname = '/postgres';
  const client = new Client({ connectionString: url.toString() });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** What can run a statement: a pool or one client. */
interface Queryable {
  query(text: string): Promise<{ rows: { n: number }[] }>;
}

/** Backends of the connection's database waiting on a lock (a row lock, an advisory lock). */
export async function lockWaiters(db: Queryable): Promise<number> {
  const { rows } = await db.query(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`,
  );
  return rows[0].n;
}

/** Until at least `count` backends of the database wait on a lock; fails after `timeoutMs`. */
export async function waitForLockWaiters(db: Queryable, count = 1, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await lockWaiters(db)) < count) {
    if (Date.now() > deadline) throw new Error(`${count} lock waiters never appeared`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
