'use strict';
// The peer app (bench/peer/: NestJS + Fastify + pg + @node-idempotency/nestjs), installed
// into bench/peer/node_modules on first use (never by the root `npm ci`), started as a
// child process beside the server, on the same database, and stopped at the end (it then
// deletes the keys it stored in Redis). docs/benchmarks.md describes it.
const { execFileSync } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const { closeSync, existsSync, openSync, statSync } = require('node:fs');
const { connect: tcpConnect } = require('node:net');
const { join } = require('node:path');
const { freePort } = require('../../dist/database/embedded-postgres.js');
const { spawnWrapped, startFlags, stop, stopTimeoutMs, waitForLine } = require('./server');

const PEER = join(__dirname, '..', 'peer');

/**
 * `npm ci` in bench/peer when its node_modules is missing or older than its lock file.
 * --legacy-peer-deps: @node-idempotency/nestjs 1.0.4 declares peers @nestjs/* ^9 || ^10.
 * --ignore-scripts: nothing in it needs an install script.
 */
function ensurePeerInstalled(log) {
  const installed = join(PEER, 'node_modules', '.package-lock.json');
  if (existsSync(installed) && statSync(installed).mtimeMs >= statSync(join(PEER, 'package-lock.json')).mtimeMs) return;
  log('peer: installing bench/peer/node_modules (npm ci --legacy-peer-deps; first use only, ~20 s)');
  execFileSync('npm', ['ci', '--legacy-peer-deps', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: PEER,
    stdio: ['ignore', 'inherit', 'inherit'],
    timeout: 300_000,
  });
}

/** Whether a Redis answers PING at `url` within a second (no client library needed). */
function redisAnswers(url) {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = tcpConnect({ host: hostname, port: Number(port || 6379) });
    let reply = '';
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk;
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
  });
}

async function startPeer({ databaseUrl, storage, redisUrl, logFile, cleanup, wrapper = [], startTimeoutMs = 60_000 }) {
  const port = await freePort();
  const keyPrefix = `kuko-bench-peer-${randomBytes(4).toString('hex')}`;
  const log = openSync(logFile, 'w');
  const child = spawnWrapped(wrapper, [...startFlags(), join(PEER, 'main.js')], {
    cwd: PEER,
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'production',
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      PEER_STORAGE: storage,
      REDIS_URL: redisUrl,
      PEER_KEY_PREFIX: keyPrefix,
    },
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const stopPeer = () => stop(child, exited, stopTimeoutMs(wrapper));
  cleanup.push('the peer app', stopPeer);
  await waitForLine(logFile, 'Listening on', child, startTimeoutMs);
  return { url: `http://127.0.0.1:${port}`, pid: child.pid, storage, keyPrefix, stop: stopPeer };
}

module.exports = { ensurePeerInstalled, redisAnswers, startPeer };
