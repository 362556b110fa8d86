'use strict';
// The built server in production mode (`node dist/main.js`) as a child process, its
// JSON log lines going to a file; and the merchant whose test key the load uses.
const { spawn } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const { closeSync, openSync, readFileSync } = require('node:fs');
const { join } = require('node:path');
const { freePort } = require('../../dist/database/embedded-postgres.js');
const { sleep } = require('./cleanup');

const ROOT = join(__dirname, '..', '..');

/**
 * The Node flags `npm start` runs the server with (package.json), so that the bench
 * measures the production start; the peer gets the same ones.
 */
function startFlags() {
  const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const words = scripts.start.split(/\s+/);
  if (words[0] !== 'exec' || words[1] !== 'node' || words[words.length - 1] !== 'dist/main.js') {
    throw new Error(`package.json's start script is not "exec node [flags] dist/main.js": ${scripts.start}`);
  }
  return words.slice(2, -1);
}

/**
 * `wrapper`: a command the server runs under (`valgrind --tool=callgrind …`), given node's
 * path and arguments; `startTimeoutMs` for the start under it.
 */
async function startServer({ databaseUrl, logFile, cleanup, env = {}, wrapper = [], startTimeoutMs = 60_000 }) {
  const port = await freePort();
  const adminToken = `bench_admin_${randomBytes(16).toString('hex')}`;
  const webhookSecret = `whsec_${randomBytes(24).toString('base64')}`;
  const log = openSync(logFile, 'w');
  const child = spawnWrapped(wrapper, [...startFlags(), join(ROOT, 'dist', 'main.js')], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: 'production',
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      ADMIN_TOKEN: adminToken,
      WEBHOOK_SECRETS: `kukopay=${webhookSecret}`,
      LOG_LEVEL: 'info',
      // The scenario that measures a purge runs it on purpose; a scheduled one must not
      // land in the middle of another scenario.
      IDEMPOTENCY_PURGE_CRON: 'off',
      // Notifications go to the bench's own receiver on 127.0.0.1.
      NOTIFY_ALLOW_PRIVATE_NETWORKS: 'true',
      ...env,
    },
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const stopServer = () => stop(child, exited, stopTimeoutMs(wrapper));
  cleanup.push('the API server', stopServer);

  await waitForLine(logFile, 'Listening on', child, startTimeoutMs);
  const url = `http://127.0.0.1:${port}`;
  const merchant = await createMerchant(url, adminToken);
  return {
    url,
    pid: child.pid,
    webhookSecret,
    merchantId: merchant.id,
    apiKey: merchant.api_keys.test,
    stop: stopServer,
  };
}

/** Under a wrapper the stop is slower, and what the wrapper says at exit is wanted. */
function stopTimeoutMs(wrapper) {
  return wrapper.length > 0 ? 120_000 : 10_000;
}

/** node with `args`, or under `wrapper` (which is then given node's path first). */
function spawnWrapped(wrapper, args, options) {
  if (wrapper.length === 0) return spawn(process.execPath, args, options);
  return spawn(wrapper[0], [...wrapper.slice(1), process.execPath, ...args], options);
}

/** Polls the log file (the child writes to it directly, costing the bench no CPU). */
async function waitForLine(file, text, child, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const content = readFileSync(file, 'utf8');
    if (content.includes(text)) return;
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`the server exited (${child.exitCode ?? child.signalCode}) before listening:\n${tail(content)}`);
    }
    await sleep(100);
  }
  throw new Error(
    `the server did not print "${text}" within ${timeoutMs / 1000} s:\n${tail(readFileSync(file, 'utf8'))}`,
  );
}

async function createMerchant(url, adminToken) {
  const response = await fetch(`${url}/v1/admin/merchants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Bench' }),
    signal: AbortSignal.timeout(10_000),
  });
  const body = await response.text();
  if (response.status !== 201) throw new Error(`creating the merchant answered ${response.status}: ${body}`);
  return JSON.parse(body).data;
}

/** SIGTERM (the server drains and exits), SIGKILL if it has not exited within `killAfterMs`. */
async function stop(child, exited, killAfterMs = 10_000) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
  await exited;
  clearTimeout(timer);
}

function tail(text, lines = 20) {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

module.exports = { startFlags, startServer, spawnWrapped, stop, stopTimeoutMs, waitForLine };
