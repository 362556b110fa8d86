// Starts one PostgreSQL for the whole run (embedded unless DATABASE_URL is set). Each test
// file creates its own database on it (test/support/database.ts), so files can run in
// parallel without sharing rows. `npm test` builds dist/ first, which the supervisor uses.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import client from './cluster-client.cjs';

export default async function globalSetup() {
  let url = process.env.DATABASE_URL;
  if (!url) {
    const cluster = await client.startClusterProcess('jest');
    globalThis.__KUKO_CLUSTER__ = cluster;
    url = cluster.url;
  }
  const dir = join(process.cwd(), '.data');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'test-server.json'), JSON.stringify({ url }));
  process.env.KUKO_TEST_SERVER_URL = url;
}
