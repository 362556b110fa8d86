// A PgBouncer in transaction pooling mode in front of the test run's PostgreSQL, so the
// whole suite can run again through it (KUKO_TEST_POOLER=pgbouncer; docs/operations.md).
// It runs as the OS user `postgres` when started as root (PgBouncer refuses root), on a
// free port of 127.0.0.1, with any database name routed to the same server.
//
// The binary is `pgbouncer` on the PATH, or KUKO_PGBOUNCER. One of version 1.21 or later
// keeps protocol-level prepared statements (max_prepared_statements), and `prepared`
// says whether it does.
const { execFileSync, spawn } = require('node:child_process');
const { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const { createServer } = require('node:net');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/** The PgBouncer to start, its version, and whether it can keep prepared statements. */
function pgBouncerBinary() {
  const binary = process.env.KUKO_PGBOUNCER || 'pgbouncer';
  const output = execFileSync(binary, ['--version'], { encoding: 'utf8' });
  const [major, minor] = (/PgBouncer (\d+)\.(\d+)/.exec(output) ?? []).slice(1).map(Number);
  if (major === undefined) throw new Error(`${binary} --version did not name a PgBouncer version`);
  return { binary, version: `${major}.${minor}`, prepared: major > 1 || minor >= 21 };
}

/** `poolSize`: PgBouncer's default_pool_size, the server connections it lends per database. */
async function startPgBouncer(upstreamUrl, { poolSize = 40 } = {}) {
  const { binary, version, prepared } = pgBouncerBinary();
  const upstream = new URL(upstreamUrl);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'kuko-pgbouncer-'));
  const asRoot = process.getuid?.() === 0;
  const user = decodeURIComponent(upstream.username || 'postgres');
  const password = decodeURIComponent(upstream.password);
  const server = `host=${upstream.hostname} port=${upstream.port || 5432} user=${user}${password ? ` password=${password}` : ''}`;
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = ${server}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      // Every client is let in and logs in upstream as the configured user.
      'auth_type = any',
      'pool_mode = transaction',
      'max_client_conn = 1000',
      `default_pool_size = ${poolSize}`,
      // 0 (none kept) by default until 1.23; 1.24's own default is 200.
      ...(prepared ? ['max_prepared_statements = 200'] : []),
      // Drivers send these; PgBouncer would refuse the connection otherwise.
      'ignore_startup_parameters = extra_float_digits,options',
      `logfile = ${join(dir, 'pgbouncer.log')}`,
      `pidfile = ${join(dir, 'pgbouncer.pid')}`,
    ].join('\n'),
  );
  if (asRoot) {
    chmodSync(dir, 0o777);
    execFileSync('chown', ['-R', 'postgres', dir]);
  }
  const command = asRoot
    ? ['runuser', ['-u', 'postgres', '--', binary, '-d', join(dir, 'pgbouncer.ini')]]
    : [binary, ['-d', join(dir, 'pgbouncer.ini')]];
  await new Promise((resolve, reject) => {
    const child = spawn(command[0], command[1], { stdio: 'inherit' });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`pgbouncer exited with ${code}`))));
  });
  await waitForPort(port);
  // It daemonised (-d): the pid it wrote, so that the bench can read its CPU time.
  const pid = await readPidfile(join(dir, 'pgbouncer.pid'));
  const url = new URL(upstreamUrl);
  url.port = String(port);
  url.hostname = '127.0.0.1';
  return {
    url: url.toString(),
    version,
    prepared,
    pid,
    stop: async () => {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // already gone
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The daemon's pid, once it has written it (not necessarily before it listens). */
async function readPidfile(path, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pid = Number.parseInt(existsSync(path) ? readFileSync(path, 'utf8') : '', 10);
    if (pid > 0) return pid;
    if (Date.now() > deadline) throw new Error(`pgbouncer wrote no pid to ${path}`);
    await new Promise((pause) => setTimeout(pause, 50));
  }
}

async function waitForPort(port, timeoutMs = 10_000) {
  const { connect } = require('node:net');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`pgbouncer is not listening on ${port}`);
    await new Promise((pause) => setTimeout(pause, 50));
  }
}

module.exports = { pgBouncerBinary, startPgBouncer };
