// What the purge of expired idempotency keys costs, on this machine (docs/operations.md):
//   1. how fast the purge removes 1,000,000 expired keys on a quiet server;
//   2. the p99 of keyed creates (POST /v1/orders, a new Idempotency-Key and out_trade_no
//      per request, 10 connections) before, during and after a purge of 1,000,000 keys.
// The purge is the same IdempotencyPurgeService the cron job and `npm run purge` run.
//
//   npm run build && node bench/purge-impact.js
//
// The server is `node dist/main.js` on a scratch database: on a throw-away embedded
// PostgreSQL, or, with BENCH_POSTGRES_URL=postgres://user@127.0.0.1:5432/postgres, a
// database created on that server and dropped at the end. Load goes to 127.0.0.1 only;
// every run is bounded in time (BENCH_SECONDS, 10 by default).
'use strict';

const { spawn } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const { join } = require('node:path');
const autocannon = require('autocannon');
const { Client } = require('pg');
const { DataSource } = require('typeorm');

const dist = join(__dirname, '..', 'dist');
const { dataSourceOptions } = require(join(dist, 'database', 'data-source-options.js'));
const { freePort } = require(join(dist, 'database', 'embedded-postgres.js'));
const { startTestCluster } = require(join(dist, 'database', 'test-clusters.js'));
const { IdempotencyPurgeService } = require(join(dist, 'idempotency', 'idempotency-purge.service.js'));

const ROWS = 1_000_000;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = 10;
const ADMIN_TOKEN = `bench-admin-${randomBytes(8).toString('hex')}`;
const log = (line) => process.stderr.write(`${line}\n`);

async function main() {
  const database = await scratchDatabase();
  let server = null;
  try {
    server = await startServer(database.url);
    const apiKey = await createMerchant(server.url);
    const db = new Client({ connectionString: database.url });
    await db.connect();
    const dataSource = new DataSource({ ...dataSourceOptions(database.url, { max: 1 }), migrationsRun: false });
    await dataSource.initialize();
    const purge = new IdempotencyPurgeService(dataSource);
    try {
      log(`inserting ${ROWS} expired keys`);
      await insertExpired(db, 'quiet');
      const quiet = await purge.purge();
      check(quiet, 'quiet purge');

      await insertExpired(db, 'loaded');
      await load(server.url, apiKey, 'warmup', 5).result;
      const before = await load(server.url, apiKey, 'before', SECONDS).result;
      // The "during" run lasts exactly as long as the purge.
      const duringLoad = load(server.url, apiKey, 'during', 120);
      const loaded = await purge.purge();
      duringLoad.stop();
      const during = await duringLoad.result;
      check(loaded, 'purge under load');
      const after = await load(server.url, apiKey, 'after', SECONDS).result;

      const report = {
        server: (await db.query('SHOW server_version')).rows[0].server_version,
        quiet_purge: figures(quiet),
        purge_under_load: figures(loaded),
        creates: { before: latency(before), during: latency(during), after: latency(after) },
        p99_during_over_before: round(during.latency.p99 / before.latency.p99, 2),
      };
      process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    } finally {
      await dataSource.destroy();
      await db.end();
    }
  } finally {
    await server?.stop();
    await database.drop();
  }
}

/** A database of our own: on BENCH_POSTGRES_URL's server, or on a throw-away embedded one. */
async function scratchDatabase() {
  const serverUrl = process.env.BENCH_POSTGRES_URL;
  if (!serverUrl) {
    log('starting a throw-away embedded PostgreSQL (set BENCH_POSTGRES_URL to use another server)');
    const cluster = await startTestCluster('bench');
    return { url: cluster.url, drop: () => cluster.stop() };
  }
  const name = `kuko_bench_${randomBytes(4).toString('hex')}`;
  await admin(serverUrl, `CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

async function admin(serverUrl, sql) {
  const client = new Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** The built server; the schedule is off so that only this script purges. */
async function startServer(databaseUrl) {
  const port = await freePort();
  const child = spawn(process.execPath, [join(dist, 'main.js')], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      ADMIN_TOKEN,
      IDEMPOTENCY_PURGE_CRON: 'off',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}`);
    if (await fetch(`${url}/health`).then((r) => r.ok, () => false)) break;
    if (i > 300) throw new Error('the server did not answer /health within 30 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

async function createMerchant(url) {
  const response = await fetch(`${url}/v1/admin/merchants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Bench' }),
  });
  if (response.status !== 201) throw new Error(`creating the merchant answered ${response.status}`);
  return (await response.json()).data.api_keys.test;
}

/** ROWS expired answers in one statement, then statistics as autovacuum would keep them. */
async function insertExpired(db, prefix) {
  await db.query(
    `INSERT INTO idempotency_keys (merchant_id, environment, key, method, path, fingerprint,
                                   response_status, response_body, request_id, expires_at)
     SELECT 'mch_bench', 'test', $1 || '-' || g, 'POST', '/v1/orders', sha256(g::text::bytea), 201,
            repeat('x', 400), 'req_' || g, now() - interval '1 hour' - g * interval '1 millisecond'
       FROM generate_series(1, $2::int) AS g`,
    [prefix, ROWS],
  );
  await db.query('VACUUM ANALYZE idempotency_keys');
}

/** Keyed creates, each with a new key and out_trade_no, for `seconds` or until stop(). */
function load(url, apiKey, phase, seconds) {
  let n = 0;
  const instance = autocannon({
    url,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        path: '/v1/orders',
        setupRequest: (request) => {
          n += 1;
          const id = `${phase}_${process.pid}_${n}`;
          return {
            ...request,
            headers: { 'content-type': 'application/json', 'x-api-key': apiKey, 'idempotency-key': `bench-${id}` },
            body: JSON.stringify({ out_trade_no: `BENCH_${id}`, amount: 2990, currency: 'USD', subject: 'Bench' }),
          };
        },
      },
    ],
  });
  const result = instance.then((r) => {
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`${phase}: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
    log(`${phase}: ${r['2xx']} creates, p99 ${r.latency.p99} ms`);
    return r;
  });
  return { result, stop: () => instance.stop() };
}

function check(result, what) {
  if (result.skipped || !result.finished || result.deleted !== ROWS) {
    throw new Error(`${what} did not remove all ${ROWS} keys: ${JSON.stringify(result)}`);
  }
}

function figures(result) {
  return {
    deleted: result.deleted,
    batches: result.batches,
    seconds: round(result.durationMs / 1000, 2),
    rows_per_second: Math.round(result.deleted / (result.durationMs / 1000)),
  };
}

function latency(result) {
  // Measured, not result.duration: autocannon rounds that up to whole seconds after stop().
  const seconds = (result.finish - result.start) / 1000;
  return {
    seconds: round(seconds, 2),
    creates_per_second: Math.round(result['2xx'] / seconds),
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    max_ms: result.latency.max,
  };
}

const round = (value, digits) => Number(value.toFixed(digits));

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
