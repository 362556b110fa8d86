// Starts one PostgreSQL for the whole run (embedded unless DATABASE_URL is set). Each test
// file creates its own database on it (test/support/database.ts), so files can run in
// parallel without sharing rows. `npm test` builds dist/ first, which the supervisor uses.
// With KUKO_TEST_POOLER=pgbouncer the applications reach it through a PgBouncer in
// transaction pooling mode, while the tests' own connections and migrations go directly;
// with a PgBouncer of version 1.21 or later (KUKO_PGBOUNCER), statements stay prepared.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import client from './cluster-client.cjs';
import pgbouncer from './pgbouncer.cjs';

export default async function globalSetup() {
  let url = process.env.DATABASE_URL;
  if (!url) {
    const cluster = await client.startClusterProcess('jest');
    globalThis.__KUKO_CLUSTER__ = cluster;
    url = cluster.url;
  }
  let poolerUrl = null;
  let poolerPrepared = false;
  if (process.env.KUKO_TEST_POOLER === 'pgbouncer') {
    const pooler = await pgbouncer.startPgBouncer(url);
    globalThis.__KUKO_POOLER__ = pooler;
    poolerUrl = pooler.url;
    poolerPrepared = pooler.prepared;
  }
  const dir = join(process.cwd(), '.data');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'test-server.json'), JSON.stringify({ url, poolerUrl, poolerPrepared }));
  process.env.KUKO_TEST_SERVER_URL = url;
  if (poolerUrl) process.env.KUKO_TEST_POOLER_URL = poolerUrl;
  if (poolerPrepared) process.env.KUKO_TEST_POOLER_PREPARED = 'on';
}
