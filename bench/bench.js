#!/usr/bin/env node
'use strict';
// `npm run bench`: the DESIGN.md §5 performance figures, in one run on this machine.
// Starts PostgreSQL (DATABASE_URL's server, or a throw-away embedded cluster) and the
// built server (`node dist/main.js`), drives every scenario of lib/scenarios.js at each
// connection count, prints one table and the ratios, writes bench/results/latest.*, and
// stops everything it started, also on failure and on SIGINT/SIGTERM.
//
// Environment: BENCH_SECONDS (10), BENCH_WARMUP_SECONDS (2), BENCH_CONNECTIONS ("10,50"),
// BENCH_SCENARIOS (ids, comma-separated; default all but the opt-in ones), BENCH_STRICT=1 (a missed target
// also fails the run), BENCH_DURABLE=0 (the embedded cluster with the test settings),
// BENCH_PEER_STORAGE (redis | memory), BENCH_REDIS_URL, BENCH_ROLE_SETTINGS (1 | 0), DATABASE_URL.
const { execFileSync } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const { mkdirSync } = require('node:fs');
const os = require('node:os');
const { join } = require('node:path');
const { readCommandLine } = require('../dist/config/command-line.js');
const { Cleanup } = require('./lib/cleanup');
const { checkpoint, openDatabase, setLimitsOnDatabase } = require('./lib/database');
const { findPostmaster, startCpuMeasure } = require('./lib/cpu');
const { ensurePeerInstalled, redisAnswers, startPeer } = require('./lib/peer');
const { startFlags, startServer } = require('./lib/server');
const { startPgBouncer } = require('../test/support/pgbouncer.cjs');
const { SCENARIOS } = require('./lib/scenarios');
const { evaluate, renderText, writeResults } = require('./lib/report');

const ROOT = join(__dirname, '..');
const PEER_PACKAGE = '@node-idempotency/nestjs 1.0.4';
const RESULTS = join(__dirname, 'results');
const log = (line) => process.stdout.write(`${line}\n`);

const USAGE = `
Usage: npm run bench   (or node bench/bench.js, after a build)

The performance figures and targets of docs/benchmarks.md, on this machine (~6 minutes):
starts PostgreSQL and the built server (and a NestJS peer app, installed on first use),
runs every scenario at each connection count, prints one table and writes
bench/results/latest.* (partial.* when a setting below is changed). Takes no arguments.

Environment (docs/benchmarks.md):
  BENCH_SECONDS (10), BENCH_WARMUP_SECONDS (2), BENCH_CONNECTIONS (10,50),
  BENCH_SCENARIOS (ids, comma-separated; default all but the opt-in ones),
  BENCH_STRICT=1 (a missed target also fails the run), BENCH_DURABLE=0 (fsync off),
  BENCH_PEER_STORAGE (redis | memory), BENCH_REDIS_URL, BENCH_ROLE_SETTINGS (1 | 0),
  DATABASE_URL (unset: a throw-away embedded PostgreSQL), KUKO_PGBOUNCER (the pgbouncer binary).
`;

function settingsFromEnv(env = process.env) {
  const number = (name, fallback, min) => {
    const value = env[name] === undefined || env[name] === '' ? fallback : Number(env[name]);
    if (!Number.isFinite(value) || value < min) throw new Error(`${name} must be a number ≥ ${min}`);
    return value;
  };
  const connections = (env.BENCH_CONNECTIONS || '10,50').split(',').map(Number);
  if (connections.some((c) => !Number.isInteger(c) || c < 1 || c > 150))
    throw new Error('BENCH_CONNECTIONS: 1 to 150, comma-separated');
  const only = env.BENCH_SCENARIOS ? env.BENCH_SCENARIOS.split(',') : null;
  const unknown = (only ?? []).filter((id) => !SCENARIOS.some((s) => s.id === id));
  const peerStorage = env.BENCH_PEER_STORAGE || 'redis';
  if (!['redis', 'memory'].includes(peerStorage)) throw new Error('BENCH_PEER_STORAGE: redis or memory');
  for (const name of ['BENCH_DURABLE', 'BENCH_ROLE_SETTINGS']) {
    if (!['', '0', '1', undefined].includes(env[name])) throw new Error(`${name}: 0 or 1`);
  }
  if (unknown.length) throw new Error(`BENCH_SCENARIOS: unknown ${unknown} (known: ${SCENARIOS.map((s) => s.id)})`);
  const defaults = [
    'BENCH_SCENARIOS',
    'BENCH_SECONDS',
    'BENCH_WARMUP_SECONDS',
    'BENCH_CONNECTIONS',
    'BENCH_DURABLE',
    'BENCH_ROLE_SETTINGS',
  ];
  return {
    // Only a run at the default settings replaces the committed results.
    complete: defaults.every((name) => env[name] === undefined || env[name] === ''),
    seconds: number('BENCH_SECONDS', 10, 1),
    warmup: number('BENCH_WARMUP_SECONDS', 2, 0),
    connections,
    scenarios: SCENARIOS.filter((s) => (only ? only.includes(s.id) : !s.optIn)),
    strict: env.BENCH_STRICT === '1',
    durable: env.BENCH_DURABLE !== '0',
    roleSettings: env.BENCH_ROLE_SETTINGS !== '0',
    peerStorage,
    redisUrl: env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379',
  };
}

/** What went wrong in one run (warm-up included): answers, errors, timeouts. */
function problemsOf(figures) {
  const problems = [];
  if (figures.non2xx) problems.push(`${figures.non2xx} non-2xx answers (statuses ${JSON.stringify(figures.statuses)})`);
  if (figures.errors) problems.push(`${figures.errors} errors, ${figures.timeouts} of them timeouts`);
  if (figures.unexpected) problems.push(`${figures.unexpected} unexpected answers`);
  if (problems.length && figures.problems.length) problems.push(`e.g. ${figures.problems.join(' | ')}`);
  return problems;
}

async function run(cleanup, settings) {
  // Before the bench adds its own load: how busy the shared machine already is.
  const loadAverageAtStart = os.loadavg().map((l) => Number(l.toFixed(2)));
  const failures = [];

  const runs = settings.connections.reduce(
    (n, c) => n + settings.scenarios.filter((s) => !s.connections || s.connections.includes(c)).length,
    0,
  );
  const primers = settings.warmup > 0 ? settings.scenarios.filter((s) => s.primes).length : 0;
  const estimate = Math.round(runs * (settings.seconds + settings.warmup + 1.5) + primers * settings.warmup + 15);
  log(
    `npm run bench: ${runs} runs of ${settings.seconds} s (+${settings.warmup} s warm-up each), about ${Math.floor(estimate / 60)} min ${estimate % 60} s`,
  );
  const database = await openDatabase(cleanup, { durable: settings.durable });
  const pg = database.server;
  log(
    `PostgreSQL ${pg.version}, ${pg.kind} at ${pg.address}, database ${database.name}: ${Object.entries(pg.settings)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')}`,
  );
  const postmasterPid = await findPostmaster(database.url);
  if (!postmasterPid) log('PostgreSQL runs on another machine: its CPU per request is not measured');
  const server = await startServer({ databaseUrl: database.url, logFile: join(RESULTS, 'server.log'), cleanup });
  log(
    `server: node ${[...startFlags(), 'dist/main.js'].join(' ')}, pid ${server.pid}, ${server.url}, log in bench/results/server.log`,
  );
  const opened = settings.scenarios.some((s) => s.peer) ? await openPeer(settings, database, cleanup) : null;
  const peer = opened?.skipped ? null : opened;
  const pooled = settings.scenarios.some((s) => s.pooled) ? await openPooled(database, cleanup, settings) : null;

  const ctx = { server, peer, pooled, database, settings, cleanup, log, tag: randomBytes(3).toString('hex') };
  const rows = [];
  const prepared = new Set();
  // The processes' first load (JIT compilation, pools filling up) must not land on the
  // first measured scenario only: each app gets one warm-up of its creates first.
  const runnable = (s) => (!s.peer || peer) && (!s.pooled || pooled);
  for (const scenario of settings.warmup > 0 ? settings.scenarios.filter((s) => s.primes && runnable(s)) : []) {
    const warm = await scenario.run(ctx, Math.min(...settings.connections), settings.warmup);
    for (const problem of problemsOf(warm)) failures.push(`${scenario.title} (first warm-up): ${problem}`);
  }
  let checkpointing = true;
  for (const connections of settings.connections) {
    for (const scenario of settings.scenarios) {
      if (scenario.connections && !scenario.connections.includes(connections)) continue;
      if ((scenario.peer && !peer) || (scenario.pooled && !pooled)) continue;
      if (!prepared.has(scenario)) {
        await scenario.prepare?.(ctx);
        prepared.add(scenario);
      }
      const label = `${scenario.title} @ ${connections}`;
      if (checkpointing && !(await checkpoint(database.url))) {
        checkpointing = false;
        log(
          'CHECKPOINT refused (the role is neither superuser nor pg_checkpoint): runs start wherever the checkpoint cycle is',
        );
      }
      if (settings.warmup > 0 && scenario.warmup !== false) {
        const warm = await scenario.run(ctx, connections, settings.warmup);
        for (const problem of problemsOf(warm)) failures.push(`${label} (warm-up): ${problem}`);
      }
      const target = scenario.target === undefined ? 'server' : scenario.target;
      const cpu = startCpuMeasure({
        serverPid: target && ctx[target].pid,
        postmasterPid,
        poolerPid: target && ctx[target].poolerPid,
      });
      const result = await scenario.run(ctx, connections, settings.seconds);
      // CPU per request only where one row is one measured window.
      const measured = Array.isArray(result)
        ? result
        : [{ id: scenario.id, title: scenario.title, ...result, ...cpu.end(result.completed) }];
      for (const figures of measured) {
        // A scenario that reports several rows may name each (figures.short wins).
        const row = { short: scenario.short, connections, ...figures };
        rows.push(row);
        for (const problem of problemsOf(row)) failures.push(`${row.title} @ ${connections}: ${problem}`);
        log(
          `  ${`${row.title} @ ${connections}`.padEnd(48)} ${String(Math.round(row.rps)).padStart(6)}/s  p50 ${row.p50} ms  p99 ${row.p99} ms${problemsOf(row).length ? '  ✗' : ''}`,
        );
      }
    }
  }

  const report = {
    date: new Date().toISOString(),
    commit: gitDescribe(),
    settings: { seconds: settings.seconds, warmup: settings.warmup, connections: settings.connections },
    peer: opened && (opened.skipped ? { skipped: opened.skipped } : { storage: peer.storage, package: PEER_PACKAGE }),
    pooler: pooled && {
      version: pooled.pgBouncerVersion,
      prepared: pooled.prepared,
      roleSettings: pooled.roleSettings,
    },
    machine: { ...machine(), loadAverageAtStart },
    postgres: pg,
    rows,
    ratios: evaluate(rows),
    failures,
  };
  log(`\n${renderText(report)}\n`);
  if (settings.complete) {
    writeResults(report, { resultsDir: RESULTS, name: 'latest', docsFile: join(ROOT, 'docs', 'benchmarks.md') });
    log('Written: bench/results/latest.json, latest.md, latest.svg (and the table in docs/benchmarks.md)');
  } else {
    writeResults(report, { resultsDir: RESULTS, name: 'partial', docsFile: null });
    log(
      'Written: bench/results/partial.json, partial.md, partial.svg (not committed; a run at the default settings writes latest.*)',
    );
  }

  const missed = report.ratios.filter((r) => r.verdict === 'FAIL');
  if (missed.length)
    log(
      `\nTargets missed: ${missed.map((r) => `${r.figure} @ ${r.connections} = ${r.value} (${r.target})`).join('; ')}`,
    );
  if (failures.length) {
    log(
      `\n${'!'.repeat(78)}\n!! BENCH FAILED: not every answer was the expected one\n${failures.map((f) => `!!  - ${f}`).join('\n')}\n${'!'.repeat(78)}`,
    );
    return 1;
  }
  log('\nEvery run: zero non-2xx answers, zero errors and timeouts, every answer as expected.');
  return settings.strict && missed.length ? 1 : 0;
}

/**
 * The peer app (bench/peer/), installed on first use, on the same database as the server;
 * or { skipped: reason }, said in a line, when Redis does not answer or the peer fails to
 * install or start.
 */
async function openPeer(settings, database, cleanup) {
  if (settings.peerStorage === 'redis' && !(await redisAnswers(settings.redisUrl))) {
    const reason = `no Redis answers at ${settings.redisUrl} (BENCH_REDIS_URL; or BENCH_PEER_STORAGE=memory)`;
    log(`peer: SKIPPED, ${reason}`);
    return { skipped: reason };
  }
  let peer;
  try {
    ensurePeerInstalled(log);
    peer = await startPeer({
      databaseUrl: database.url,
      storage: settings.peerStorage,
      redisUrl: settings.redisUrl,
      logFile: join(RESULTS, 'peer.log'),
      cleanup,
    });
  } catch (error) {
    const why = error.message.split('\n')[0];
    const reason = `the peer could not be installed or started (${why}; bench/results/peer.log)`;
    log(`peer: SKIPPED, ${reason}`);
    return { skipped: reason };
  }
  log(`peer: bench/peer/main.js (@node-idempotency/nestjs, ${peer.storage} storage), pid ${peer.pid}, ${peer.url}`);
  return peer;
}

/**
 * A second server in transaction-pooling mode behind a PgBouncer (Debian's package) in
 * front of the same database, as docs/operations.md sets one up; or null, said in a line,
 * when pgbouncer is not installed.
 */
async function openPooled(database, cleanup, { roleSettings }) {
  // As docs/operations.md recommends behind a pooler: the limits set on the database
  // (before PgBouncer opens a server connection), none sent per transaction.
  if (roleSettings) await setLimitsOnDatabase(database.url);
  let bouncer;
  try {
    bouncer = await startPgBouncer(database.url);
  } catch (error) {
    log(`PgBouncer: SKIPPED, pgbouncer is not installed or did not start (${error.message.split('\n')[0]})`);
    return null;
  }
  cleanup.push('PgBouncer', () => bouncer.stop());
  const pooled = await startServer({
    databaseUrl: bouncer.url,
    logFile: join(RESULTS, 'server-pooled.log'),
    cleanup,
    // It only takes the pooled scenario's creates: with its own notification workers it
    // would deliver beside the main server in the notification scenarios.
    env: {
      DATABASE_POOL_MODE: 'transaction',
      DATABASE_POOL_PREPARED_STATEMENTS: bouncer.prepared ? 'on' : 'off',
      DATABASE_POOL_ROLE_SETTINGS: roleSettings ? 'on' : 'off',
      DATABASE_DIRECT_URL: database.url,
      NOTIFY_WORKERS: 'off',
    },
  });
  const prepared = bouncer.prepared ? 'statements prepared' : 'nothing prepared';
  Object.assign(pooled, {
    pgBouncerVersion: bouncer.version,
    prepared: bouncer.prepared,
    roleSettings,
    poolerPid: bouncer.pid,
  });
  log(
    `server via PgBouncer ${bouncer.version} (transaction pooling, ${prepared}): pid ${pooled.pid}, ${pooled.url}, log in bench/results/server-pooled.log`,
  );
  return pooled;
}

function machine() {
  const cpus = os.cpus();
  return {
    node: process.version,
    nodeFlags: startFlags().join(' '),
    cpus: cpus.length,
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()}`,
    loadAverageAtEnd: os.loadavg().map((l) => Number(l.toFixed(2))),
  };
}

/** The commit measured, marked when src/ has uncommitted changes. */
function gitDescribe() {
  try {
    const git = (...args) =>
      execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return `${git('rev-parse', '--short', 'HEAD')}${git('status', '--porcelain', '--', 'src', 'migrations') ? ' + uncommitted changes in src/' : ''}`;
  } catch {
    return 'unknown';
  }
}

function main() {
  // Before anything starts: --help, or a typo, must not begin a 6-minute run.
  readCommandLine({ name: 'bench', usage: USAGE });
  mkdirSync(RESULTS, { recursive: true });
  const cleanup = new Cleanup(log);
  let stopping = false;
  const finish = (code) => {
    if (stopping) return;
    stopping = true;
    cleanup.run().finally(() => process.exit(code));
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
      log(`\n${signal}: stopping the server and PostgreSQL the bench started`);
      finish(130);
    });
  }
  Promise.resolve()
    .then(() => run(cleanup, settingsFromEnv()))
    .then(finish, (error) => {
      // Once a signal stops what the bench started, the run fails on it: nothing to report.
      if (!stopping) log(`\nBENCH ERROR: ${error.stack ?? error.message}`);
      finish(2);
    });
}

main();
