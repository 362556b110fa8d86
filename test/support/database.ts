import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client, Pool } from 'pg';

/** The PostgreSQL server of this test run (see global-setup.mjs). */
export function testServerUrl(): string {
  return (
    process.env.KUKO_TEST_SERVER_URL ??
    JSON.parse(readFileSync(join(process.cwd(), '.data', 'test-server.json'), 'utf8')).url
  );
}

export interface TestDatabase {
  url: string;
  /** For assertions on the rows behind the answers. */
  pool: Pool;
  drop(): Promise<void>;
}

/** A fresh, empty database for one test file; migrations run when the app starts. */
export async function createTestDatabase(serverUrl = testServerUrl()): Promise<TestDatabase> {
  const name = `kuko_t_${randomBytes(6).toString('hex')}`;
  await admin(serverUrl, `CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const pool = new Pool({ connectionString: url.toString(), max: 4 });
  // Tests terminate backends and force-drop databases on purpose; an idle client that
  // this ends must not take the test process down with an unhandled 'error' event.
  pool.on('error', () => undefined);
  return {
    url: url.toString(),
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
