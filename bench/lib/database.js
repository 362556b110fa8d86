'use strict';
// The bench's PostgreSQL: the server named by DATABASE_URL, or else a throw-away embedded
// cluster (dist/database/test-clusters.js: PostgreSQL 18), durable by default as production
// runs (fsync, synchronous_commit and full_page_writes on); BENCH_DURABLE=0 for the test
// settings (all three off). Either way the bench works in a fresh database
// kuko_bench_<random>: dropped at the end on an external server; a throw-away cluster is
// removed whole.
const { randomBytes } = require('node:crypto');
const { join } = require('node:path');
const { Client } = require('pg');
const { withTimeout } = require('./cleanup');

const ROOT = join(__dirname, '..', '..');
const SETTINGS = ['fsync', 'synchronous_commit', 'full_page_writes', 'shared_buffers', 'max_connections'];

async function openDatabase(cleanup, { durable = true } = {}) {
  let serverUrl = process.env.DATABASE_URL;
  let kind = 'external (DATABASE_URL)';
  if (!serverUrl) {
    const { startTestCluster } = require(join(ROOT, 'dist', 'database', 'test-clusters.js'));
    const starting = startTestCluster('bench', { durable });
    const cluster = await withTimeout(starting, 120_000, 'starting the embedded PostgreSQL');
    cleanup.push('the embedded PostgreSQL', () => cluster.stop());
    serverUrl = cluster.url;
    kind = `embedded throw-away cluster, ${durable ? 'durable' : 'test settings (BENCH_DURABLE=0)'}`;
  }
  const name = `kuko_bench_${randomBytes(4).toString('hex')}`;
  await query(serverUrl, `CREATE DATABASE ${name}`);
  // A throw-away cluster goes with its databases (and Ctrl-C may have stopped it already).
  if (process.env.DATABASE_URL) {
    cleanup.push(`database ${name}`, () => query(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), name, server: await describe(url, kind) };
}

/** Version and the settings that matter for write throughput; never the password. */
async function describe(url, kind) {
  const client = await connect(url.toString());
  try {
    const { rows } = await client.query('SELECT name, setting, unit FROM pg_settings WHERE name = ANY($1)', [SETTINGS]);
    const version = (await client.query('SHOW server_version')).rows[0].server_version;
    const settings = Object.fromEntries(
      rows.map((r) => [r.name, r.unit === '8kB' ? `${(r.setting * 8) / 1024} MB` : r.setting]),
    );
    return { kind, address: `${url.hostname}:${url.port || 5432}`, version, settings };
  } finally {
    await client.end();
  }
}

async function query(url, sql, params) {
  const client = await connect(url);
  try {
    return await client.query(sql, params);
  } finally {
    await client.end();
  }
}

/** A client that gives up instead of hanging: 5 s to connect, 60 s per statement. */
async function connect(url, options = {}) {
  const client = new Client({
    connectionString: url,
    connectionTimeoutMillis: 5000,
    query_timeout: 60_000,
    application_name: 'kukopay-bench',
    ...options,
  });
  await client.connect();
  return client;
}

/**
 * Starts the next run right after a checkpoint. A durable PostgreSQL writes each page's
 * full image to the WAL the first time the page changes after a checkpoint; a timed
 * checkpoint (every 5 minutes by default) landing inside one run and not its
 * counterpart made that run pay alone (and a keyed create changes one randomly placed
 * B-tree leaf more than the peer's: its stored answer's key). So every run starts in
 * the same place of the cycle, none gets a checkpoint by chance, and the warm-up
 * absorbs the first burst. Returns false where the role may not checkpoint (an external
 * DATABASE_URL without superuser or pg_checkpoint); the bench then says so once and
 * goes on.
 */
async function checkpoint(url) {
  try {
    await query(url, 'CHECKPOINT');
    return true;
  } catch (error) {
    if (error.code === '42501') return false;
    throw error;
  }
}

/** The service's limits as the database's own settings (DATABASE_POOL_ROLE_SETTINGS=on). */
async function setLimitsOnDatabase(url) {
  const { SESSION_SETTINGS } = require(join(ROOT, 'dist', 'database', 'data-source-options.js'));
  const name = new URL(url).pathname.slice(1);
  for (const [setting, value] of Object.entries(SESSION_SETTINGS)) {
    await query(url, `ALTER DATABASE ${name} SET ${setting} = '${value}'`);
  }
}

module.exports = { openDatabase, checkpoint, connect, query, setLimitsOnDatabase };
