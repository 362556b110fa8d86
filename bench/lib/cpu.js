'use strict';
// CPU time per request, read from /proc over a measured run: the server process (every
// thread: JavaScript, libuv's pool, the garbage collector) and PostgreSQL (the postmaster,
// every live child, and the children that exited during the run, which the postmaster has
// reaped into its cutime/cstime). Linux only; elsewhere, or for a PostgreSQL on another
// machine, the figures are null.
const { execFileSync } = require('node:child_process');
const { readdirSync, readFileSync } = require('node:fs');
const { connect } = require('./database');

const TICKS_PER_SECOND = clockTicks();

function clockTicks() {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
}

/** Fields of /proc/<pid>/stat after the command name: [state, ppid, …]; null if gone. */
function statFields(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

// Offsets into statFields(): field n of proc(5) is at n - 3.
const PPID = 1;
const UTIME = 11;
const STIME = 12;
const CUTIME = 13;
const CSTIME = 14;

/** CPU ticks of one process (all its threads), or null. */
function processTicks(pid) {
  const f = statFields(pid);
  return f ? Number(f[UTIME]) + Number(f[STIME]) : null;
}

/** CPU ticks of a postmaster and all its backends, live and exited, or null. */
function postgresTicks(postmaster) {
  const own = statFields(postmaster);
  if (!own) return null;
  let ticks = Number(own[UTIME]) + Number(own[STIME]) + Number(own[CUTIME]) + Number(own[CSTIME]);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const f = statFields(entry);
    if (f && Number(f[PPID]) === postmaster) ticks += Number(f[UTIME]) + Number(f[STIME]);
  }
  return ticks;
}

/** The postmaster's pid: the parent of one of its backends, if that backend is on this machine. */
async function findPostmaster(url) {
  const client = await connect(url);
  try {
    const backend = (await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    const f = statFields(backend);
    return f ? Number(f[PPID]) : null;
  } finally {
    await client.end();
  }
}

/**
 * Starts a measurement; `end(requests)` gives µs of CPU per request for each side: the
 * server, PostgreSQL, and the PgBouncer in between when there is one (`poolerPid`).
 */
function startCpuMeasure({ serverPid, postmasterPid, poolerPid }) {
  const read = () => ({
    server: serverPid ? processTicks(serverPid) : null,
    pg: postmasterPid ? postgresTicks(postmasterPid) : null,
    pooler: poolerPid ? processTicks(poolerPid) : null,
  });
  const before = read();
  return {
    end(requests) {
      const after = read();
      const perRequest = (key) =>
        before[key] === null || after[key] === null || !requests
          ? null
          : Math.round(((after[key] - before[key]) * 1e6) / TICKS_PER_SECOND / requests);
      return {
        serverCpuUs: perRequest('server'),
        pgCpuUs: perRequest('pg'),
        ...(poolerPid ? { poolerCpuUs: perRequest('pooler') } : {}),
      };
    },
  };
}

module.exports = { findPostmaster, startCpuMeasure };
