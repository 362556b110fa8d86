#!/usr/bin/env node
/**
 * npm run bench:instructions: CPU instructions per create, counted, for this server and for
 * the peer (bench/peer/). The bench's figures are CPU time on two cores the server shares
 * with PostgreSQL and the load generator, which moves from run to run by more than most
 * changes to the server; an instruction count does not (valgrind's callgrind counts every
 * instruction the process executes, in all its threads, whatever else the machine does:
 * two runs of one build agree within 2 %). Kernel time (system calls) and cache misses
 * are not in it, so it says where the server's own code goes, not the whole of its CPU.
 *
 * Each process runs under `valgrind --tool=callgrind` (Debian's `valgrind`) with counting
 * off, takes a warm-up of WARM creates (10,000: with fewer, V8's optimising compiler is
 * still at work and its instructions are counted too), then COUNT creates with counting
 * on (autocannon, one at a time on each of 10 keep-alive connections, as the bench's
 * create scenarios send them); it then stops and valgrind says
 * what it counted.
 * Keyed creates send a new Idempotency-Key each; the peer stores its keys in Redis at
 * BENCH_REDIS_URL (`redis://127.0.0.1:6379`). Takes 5-8 minutes.
 *
 *   npm run bench:instructions [-- server-nokey server-key peer-nokey peer-key]   (--help)
 *
 * Environment: DATABASE_URL as for the bench (else a throw-away embedded cluster),
 * BENCH_INSTRUCTIONS_WARM (10000), BENCH_INSTRUCTIONS_COUNT (500).
 */
'use strict';
const { execFileSync, spawnSync } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const { mkdirSync, readFileSync, rmSync } = require('node:fs');
const { join } = require('node:path');
const { Cleanup } = require('./lib/cleanup');
const { openDatabase } = require('./lib/database');
const { runHttp } = require('./lib/load');
const { ensurePeerInstalled, redisAnswers, startPeer } = require('./lib/peer');
const { createOrderRequest } = require('./lib/scenarios');
const { startServer } = require('./lib/server');
const { Tally } = require('./lib/stats');

const { readCommandLine, refuseArguments } = require('../dist/config/command-line.js');

const USAGE = `
Usage: npm run bench:instructions [-- TARGET ...]   (or node bench/instructions.js, after a build)

CPU instructions per order create, counted under valgrind's callgrind, for this server and
for the peer app (docs/benchmarks.md, "Instructions per request, counted"; ~6 minutes).
TARGETs: server-nokey server-key peer-nokey peer-key (default all four).

Environment: DATABASE_URL (default: a throw-away embedded cluster), BENCH_REDIS_URL
(redis://127.0.0.1:6379, for the peer), BENCH_INSTRUCTIONS_WARM (10000),
BENCH_INSTRUCTIONS_COUNT (500).
`;
const RESULTS = join(__dirname, 'results');
const TARGETS = ['server-nokey', 'server-key', 'peer-nokey', 'peer-key'];
const WARM = Number(process.env.BENCH_INSTRUCTIONS_WARM ?? 10_000);
const COUNT = Number(process.env.BENCH_INSTRUCTIONS_COUNT ?? 500);
const CONNECTIONS = 10;
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

async function main() {
  const { positionals: targets } = readCommandLine({ name: 'bench:instructions', usage: USAGE, positionals: 4 });
  const unknown = targets.filter((target) => !TARGETS.includes(target));
  if (unknown.length > 0) refuseArguments('bench:instructions', `unknown target '${unknown[0]}'`);
  if (spawnSync('valgrind', ['--version']).status !== 0) {
    throw new Error('valgrind is not installed (Debian: apt-get install valgrind)');
  }
  const wanted = targets.length > 0 ? targets : TARGETS;
  if (wanted.some((target) => target.startsWith('peer'))) {
    if (!(await redisAnswers(REDIS_URL)))
      throw new Error(`no Redis answers at ${REDIS_URL} (BENCH_REDIS_URL) for the peer`);
    ensurePeerInstalled(console.log);
  }
  const cleanup = new Cleanup(console.log);
  process.once('SIGINT', () => void cleanup.run().finally(() => process.exit(130)));
  try {
    const database = await openDatabase(cleanup);
    // Migrated by a start without valgrind, which would take minutes under it; its merchant's
    // key is the one every target is sent.
    const plain = await startServer({ databaseUrl: database.url, logFile: join(RESULTS, 'instructions.log'), cleanup });
    await plain.stop();
    console.log(
      `${WARM} creates of warm-up, then ${COUNT} counted, ${CONNECTIONS} connections; PostgreSQL ${database.server.version}, ${database.server.kind}`,
    );
    const rows = [];
    for (const target of wanted) {
      const perRequest = await count(target, database.url, plain.apiKey, cleanup);
      rows.push([target, perRequest]);
      console.log(
        `  ${target.padEnd(13)} ${Math.round(perRequest).toLocaleString('en-US').padStart(11)} instructions per request`,
      );
    }
    const figure = (name) => rows.find(([target]) => target === name)?.[1];
    for (const kind of ['nokey', 'key']) {
      const [ours, peer] = [figure(`server-${kind}`), figure(`peer-${kind}`)];
      if (ours && peer)
        console.log(`  server ÷ peer, ${kind === 'key' ? 'keyed' : 'unkeyed'}: ${(ours / peer).toFixed(2)}`);
    }
  } finally {
    await cleanup.run();
  }
}

/** Instructions per request of one target, warmed up, counted over COUNT creates. */
async function count(target, databaseUrl, apiKey, cleanup) {
  const dumps = join(RESULTS, `callgrind-${target}`);
  rmSync(dumps, { recursive: true, force: true });
  mkdirSync(dumps, { recursive: true });
  const wrapper = [
    'valgrind',
    '--tool=callgrind',
    '--instr-atstart=no',
    // V8 writes and rewrites machine code on its heap: valgrind must notice.
    '--smc-check=all-non-file',
    `--callgrind-out-file=${join(dumps, 'callgrind.out.%p')}`,
  ];
  const logFile = join(RESULTS, `instructions-${target}.log`);
  const options = { databaseUrl, logFile, cleanup, wrapper, startTimeoutMs: 300_000 };
  const app = target.startsWith('peer')
    ? await startPeer({ ...options, storage: 'redis', redisUrl: REDIS_URL })
    : await startServer(options);
  const keyed = target.endsWith('-key');
  try {
    await creates(app.url, apiKey, keyed, WARM);
    callgrindControl('-i', 'on', app.pid);
    await creates(app.url, apiKey, keyed, COUNT);
    callgrindControl('-i', 'off', app.pid);
  } finally {
    await app.stop();
  }
  rmSync(dumps, { recursive: true, force: true });
  // valgrind's last line at exit: what was counted, all of it between `-i on` and `-i off`.
  const totals = /==\d+== Collected : (\d+)/.exec(readFileSync(logFile, 'utf8'));
  if (!totals) throw new Error(`valgrind reported no count for ${target} (${logFile})`);
  return Number(totals[1]) / COUNT;
}

function callgrindControl(...args) {
  execFileSync('callgrind_control', args.map(String), { stdio: 'ignore', timeout: 60_000 });
}

/**
 * `amount` creates, as the bench's create scenarios send them (one in flight on each of
 * CONNECTIONS keep-alive connections); every answer must be 201.
 */
async function creates(url, apiKey, keyed, amount) {
  const tally = new Tally();
  const ctx = { server: { apiKey }, tag: `I${randomBytes(3).toString('hex')}` };
  const request = createOrderRequest(ctx, keyed, tally);
  const run = await runHttp({ url, connections: CONNECTIONS, amount, request, expectStatus: 201, tally });
  if (run.unexpected + run.errors + run.timeouts > 0) {
    throw new Error(`creates answered otherwise than 201: ${JSON.stringify(run.statuses)} ${run.problems.join('; ')}`);
  }
}

main().catch((error) => {
  console.error(`bench:instructions: ${error.message}`);
  process.exit(1);
});
