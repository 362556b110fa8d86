import { ChildProcess, execFile, spawn, SpawnOptions, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { ADVISORY_LOCKS, lockArgs } from '../src/database/advisory-locks';
import { freePort, isAlive } from '../src/database/embedded-postgres';
import { createTestDatabase, databaseEnv, testServerUrl, waitForLockWaiters } from './support/database';
import { orderBody } from './support/factories';
import { ServerProcess, startServerProcess } from './support/server-process';
import { startRelay } from './support/relay';
import { selfSignedCertificate, startTlsOnlyServer } from './support/tls-postgres';

describe('start-up (docs/operations.md)', () => {
  const start = (env: Record<string, string>) =>
    spawnSync(process.execPath, [join(__dirname, '..', 'dist', 'main.js')], {
      env: { ...process.env, DATABASE_URL: '', ...env },
      encoding: 'utf8',
      timeout: 20000,
    });
  /** The same without blocking this process; resolves with the exit code and output either way. */
  const startAsync = (env: Record<string, string>) =>
    promisify(execFile)(process.execPath, [join(__dirname, '..', 'dist', 'main.js')], {
      env: { ...process.env, DATABASE_URL: '', ...env },
      timeout: 20000,
    }).then(
      (done) => ({ code: 0, ...done }),
      (failed: { code: number; stdout: string; stderr: string }) => failed,
    );

  it('stops with a message naming the variable when the configuration is bad', () => {
    const result = start({ PORT: 'eighty' });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('Invalid configuration: PORT must be a whole number');
  });

  it('names HOST before starting anything when it cannot be listened on', () => {
    for (const [host, reason] of [
      ['no-such-host.invalid', 'ENOTFOUND'],
      ['192.0.2.1', 'EADDRNOTAVAIL'],
    ]) {
      const result = start({ HOST: host });
      expect(result.status).toBe(1);
      expect(result.stderr).toContain(`Invalid configuration: HOST cannot be listened on: ${reason} (got "${host}"`);
      // Refused before the embedded PostgreSQL started: nothing of it in the output.
      expect(result.stdout).not.toContain('PostgreSQL');
    }
  });

  it('stops at start-up on a malformed webhook secret, without printing it', () => {
    const valid = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
    const result = start({ WEBHOOK_SECRETS: `other:live=${valid},kukopay=${valid} whsec_not*base64` });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('Invalid configuration: WEBHOOK_SECRETS entry #2, secret #2 of provider "kukopay"');
    expect(result.stderr).not.toContain('not*base64');
  });

  /** A database that never answers, waited for 2.5 s: a warning for each try, then the failure. */
  const UNREACHABLE = { DATABASE_URL: 'postgres://app:s3cret@127.0.0.1:1/kukopay', DATABASE_START_TIMEOUT_MS: '2500' };
  const expectWaitedThenFailed = (result: { status: number | null; stdout: string; stderr: string }) => {
    expect(result.status).toBe(1);
    const waits = result.stdout.split('\n').filter((line) => line.includes('trying again'));
    expect(waits.length).toBeGreaterThanOrEqual(2);
    for (const line of waits) {
      expect(JSON.parse(line)).toMatchObject({
        level: 'warn',
        msg: expect.stringMatching(
          /^DATABASE_URL \(app@127\.0\.0\.1:1\/kukopay\): connect ECONNREFUSED .*; trying again in \d+ ms, for up to \d s more \(DATABASE_START_TIMEOUT_MS=2500\)$/,
        ),
      });
    }
    expect(result.stderr).toMatch(/Failed to start: DATABASE_URL \(app@127\.0\.0\.1:1\/kukopay\): .*ECONNREFUSED/);
    expect(`${result.stdout}${result.stderr}`).not.toContain('s3cret');
    expect(result.stderr).not.toMatch(/Failed to start:[^\n]*\n\s+at /);
  };

  it('waits DATABASE_START_TIMEOUT_MS for a database it cannot reach, saying why, then names it without its password or a stack', () => {
    expectWaitedThenFailed(start({ ...UNREACHABLE, LOG_LEVEL: 'info', LOG_FORMAT: 'json' }));
  });

  it('npm run worker waits and names what it could not reach the same way', () => {
    const result = spawnSync(process.execPath, [join(__dirname, '..', 'dist', 'worker.js')], {
      env: { ...process.env, ...UNREACHABLE, LOG_LEVEL: 'info', LOG_FORMAT: 'json' },
      encoding: 'utf8',
      timeout: 20000,
    });
    expectWaitedThenFailed(result);
  });

  // One `docker compose up` starts the database beside the service; a PgBouncer answers
  // from a failed login for 15 s. The start tried three times in 3 s, saying only
  // "Unable to connect to the database. Retrying".
  it('serves once a database that could not be reached at first is there', async () => {
    const db = await createTestDatabase();
    const relay = await startRelay(new URL(db.url));
    let server: Awaited<ReturnType<typeof startServerProcess>> | undefined;
    try {
      await relay.cut();
      const relayed = new URL(db.url);
      relayed.host = `127.0.0.1:${relay.port}`;
      const starting = startServerProcess({ ...databaseEnv(db.url), DATABASE_URL: relayed.toString() });
      await new Promise((resolve) => setTimeout(resolve, 4000));
      await relay.restore();
      server = await starting;
      const waits = server.stdout.filter((line) => line.includes('trying again'));
      expect(waits.length).toBeGreaterThanOrEqual(1);
      expect(waits.join('\n')).toMatch(/ECONNREFUSED/);
      const created = await fetch(`${server.url}/health`);
      expect(created.status).toBe(200);
    } finally {
      await server?.kill('SIGTERM');
      await relay.close();
      await db.drop();
    }
  }, 60_000);

  it.each([
    ['a setting PostgreSQL does not know', '?options=-c%20lock_timeot%3D1s', /unrecognized configuration parameter/],
    ['a value it cannot take', '?options=-c%20lock_timeout%3Dsoon', /invalid value for parameter/],
    ['TLS from a server without it', '?sslmode=require', /does not support SSL connections/],
  ])('says at once, without retrying, that the URL asks for %s', (_what, query, reason) => {
    const result = start({ DATABASE_URL: `${testServerUrl()}${query}` });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/Failed to start: DATABASE_URL \(/);
    expect(result.stderr).toMatch(reason);
    expect(`${result.stdout}${result.stderr}`).not.toMatch(/trying again/);
  });

  it.each([
    ['not issued by an authority it trusts', 'kuko-db.example', 'require', /self-signed certificate/],
    ['issued for another host', 'kuko-db.example', 'verify-full&sslrootcert=CERT', /does not match certificate/],
  ])('says at once, without retrying, that the server certificate is %s', async (_what, name, sslmode, reason) => {
    const certificate = selfSignedCertificate(name);
    const server = await startTlsOnlyServer(certificate);
    const dir = mkdtempSync(join(tmpdir(), 'kuko-ca-'));
    try {
      writeFileSync(join(dir, 'ca.pem'), certificate.cert);
      const query = sslmode.replace('CERT', encodeURIComponent(join(dir, 'ca.pem')));
      // Asynchronously, unlike start(): the fake server answers from this process.
      const result = await startAsync({
        DATABASE_URL: `postgres://app@127.0.0.1:${server.port}/kukopay?sslmode=${query}`,
      });
      expect(result.code).toBe(1);
      const output = `${result.stdout}${result.stderr}`;
      expect(output).toMatch(/Failed to start: DATABASE_URL \(app@127\.0\.0\.1:\d+\/kukopay\): /);
      expect(output).toMatch(reason);
      expect(output).not.toMatch(/trying again/);
      // pg's ten-line warning that it reads require as verify-full, printed on every start.
      expect(output).not.toContain('SECURITY WARNING');
      expect(server.connections()).toBe(1);
    } finally {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says at once, without retrying, that the database named does not exist', () => {
    const url = new URL(testServerUrl());
    url.pathname = '/kuko_no_such_database';
    const result = start({ DATABASE_URL: url.toString() });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/Failed to start: DATABASE_URL \(.*\/kuko_no_such_database\): .*does not exist/);
    expect(`${result.stdout}${result.stderr}`).not.toMatch(/trying again/);
    // Said once: Nest's own report of the failed start is not written beside it.
    expect(`${result.stdout}${result.stderr}`.match(/does not exist/g)).toHaveLength(1);
  });

  it('npm run migration:run applies the migrations once, then has nothing to do', async () => {
    const db = await createTestDatabase();
    try {
      const migrate = () =>
        spawnSync(process.execPath, [join(__dirname, '..', 'dist', 'database', 'migrate.cli.js')], {
          // Through the run's pooler, on the direct URL as an operator sets it.
          env: { ...process.env, ...databaseEnv(db.url) },
          encoding: 'utf8',
          timeout: 30000,
        });
      const first = migrate();
      expect(first.status).toBe(0);
      expect(first.stdout).toMatch(/^Applied CreateMerchants\d+, .*CreateRefunds\d+/m);
      const { rows } = await db.pool.query(`SELECT to_regclass('idempotency_keys') IS NOT NULL AS present`);
      expect(rows[0].present).toBe(true);
      const again = migrate();
      expect(again.status).toBe(0);
      expect(again.stdout).toContain('No pending migrations.');
    } finally {
      await db.drop();
    }
  });

  it('npm run migration:run names the database it could not migrate, as the server does', () => {
    const url = new URL(testServerUrl());
    url.pathname = '/kuko_no_such_database';
    const result = spawnSync(process.execPath, [join(__dirname, '..', 'dist', 'database', 'migrate.cli.js')], {
      env: { ...process.env, DATABASE_URL: url.toString(), DATABASE_DIRECT_URL: '', DATABASE_POOL_MODE: '' },
      encoding: 'utf8',
      timeout: 30000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/^Migration failed: DATABASE_URL \(.*\/kuko_no_such_database\): .*does not exist\n$/);
  });

  it.each([
    ['the server', 'main.js', 'stdout', 'SIGTERM received while starting: stopping before serving'],
    ['the worker', 'worker.js', 'stdout', 'SIGTERM received while starting: stopping before serving'],
    [
      'npm run migration:run',
      join('database', 'migrate.cli.js'),
      'stderr',
      'SIGTERM received: npm run migration:run stopped; what it committed stays',
    ],
  ] as const)(
    '%s says so and exits as the signal would when SIGTERM comes while it waits for the migration lock',
    async (_name, entry, stream, said) => {
      const db = await createTestDatabase();
      const holder = await db.pool.connect();
      try {
        await holder.query(`SELECT pg_advisory_lock(${lockArgs(ADVISORY_LOCKS.migrations)})`);
        const { child, exited, output, seen } = spawnWatched(
          process.execPath,
          [join(__dirname, '..', 'dist', entry)],
          { env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', ...databaseEnv(db.url) } },
          stream,
        );
        await seen('for the migration lock');
        child.kill('SIGTERM');
        expect(await exited).toBe(143);
        expect(output()).toContain(said);
      } finally {
        holder.release();
        await db.drop();
      }
    },
  );

  it('the worker writes the format LOG_FORMAT names, as the server does, and drains on SIGTERM', async () => {
    const db = await createTestDatabase();
    try {
      const { child, exited, output, seen } = spawnWatched(
        process.execPath,
        [join(__dirname, '..', 'dist', 'worker.js')],
        {
          env: { ...process.env, LOG_LEVEL: 'info', LOG_FORMAT: 'Pretty', ...databaseEnv(db.url) },
        },
      );
      await seen('Delivering notifications');
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      const lines = output().trim().split('\n');
      expect(lines.filter((line) => line.startsWith('{'))).toEqual([]);
      expect(output()).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: \[Worker\] Delivering notifications/m);
      // Which database it delivers from, as the server's start-up line says, without a password.
      expect(output()).toMatch(
        /Delivering notifications \(no HTTP server in this process\); database \S+@127\.0\.0\.1:\d+\/kuko_t_/,
      );
      expect(output()).toMatch(/INFO: \[Worker\] SIGTERM received/);
      // The last line says the stop ended, not only that it began.
      expect(lines.at(-1)).toMatch(/INFO: \[Worker\] stopped: everything in flight finished$/);
    } finally {
      await db.drop();
    }
  });

  // npm runs a script under `sh -c`; Debian's sh (dash) neither execs the command nor passes
  // on the SIGTERM npm forwards, so without `exec` the server would be left running.
  it('npm start hands its SIGTERM to the server: the script execs node, which drains and exits', async () => {
    const db = await createTestDatabase();
    const { scripts } = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    const port = await freePort();
    let child: ChildProcess | undefined;
    try {
      // A process group of its own, so that whatever the script left running is ended below.
      const script = spawnWatched('sh', ['-c', scripts.start], {
        cwd: join(__dirname, '..'),
        env: { ...process.env, PORT: String(port), LOG_LEVEL: 'info', ...databaseEnv(db.url) },
        detached: true,
      });
      child = script.child;
      const { exited, output, seen } = script;
      await seen('Listening on');
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(output()).toContain('SIGTERM received');
      await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
    } finally {
      try {
        if (child?.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // The group has exited: nothing was left behind.
      }
      await db.drop();
    }
  });

  it("creates no demo merchant on an operator's database (DATABASE_URL set), and prints no key", async () => {
    const db = await createTestDatabase();
    try {
      const server = await startServerProcess({ DATABASE_URL: db.url });
      await server.kill('SIGTERM');
      expect(server.stdout.join('\n')).not.toMatch(/kuko_(test|live)_/);
      const { rows } = await db.pool.query('SELECT count(*)::int AS n FROM merchants');
      expect(rows[0].n).toBe(0);
    } finally {
      await db.drop();
    }
  });

  it('on a taken port says which variable to change once, starts nothing, and keeps the demo key for the start that listens', async () => {
    const home = mkdtempSync(join(tmpdir(), 'kukopay-start-'));
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const failed = spawnSync(process.execPath, [join(__dirname, '..', 'dist', 'main.js')], {
        cwd: home,
        env: { ...process.env, DATABASE_URL: '', HOST: '127.0.0.1', PORT: String(port) },
        encoding: 'utf8',
        timeout: 30000,
      });
      expect(failed.status).toBe(1);
      expect(failed.stderr).toMatch(/EADDRINUSE.*set PORT \(or HOST\) to a free address/);
      expect(failed.stderr).not.toMatch(/\n\s+at /);
      expect(failed.stdout).not.toMatch(/kuko_test_/);
      // Refused before anything started: no database, no workers, and one message.
      expect(existsSync(join(home, '.data'))).toBe(false);
      expect(failed.stdout).not.toMatch(/EADDRINUSE|notification|migration/i);
      expect(failed.stderr.match(/EADDRINUSE/g)).toHaveLength(1);

      const next = await startServerProcess({ DATABASE_URL: '' }, home);
      expect(next.stdout.join('\n')).toMatch(/Demo merchant .* created/);
      // Logs in JSON (stdout is not a terminal): the key is one of their lines, not a block of text.
      const lines = next.stdout.map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(lines.find((line) => 'test_api_key' in line)).toMatchObject({
        level: 'info',
        msg: expect.stringMatching(/^Demo merchant mch_[0-9a-f]{32} created; its test API key is shown only now$/),
        test_api_key: expect.stringMatching(/^kuko_test_[\w-]{32}$/),
      });
      await next.kill('SIGTERM');
    } finally {
      taken.close();
      rmSync(home, { recursive: true, force: true });
    }
  });

  // The embedded PostgreSQL still starting (its postmaster.pid written, not yet ready: the
  // signal came before it could be stopped, and it was left running), then up while the
  // rest of the start runs (stopping it failed that start: exit 1).
  it.each([
    ['while its embedded PostgreSQL starts', 'postmaster.pid'],
    ['while it connects to that PostgreSQL', 'dependencies initialized'],
  ])('without DATABASE_URL, SIGTERM %s stops that PostgreSQL and exits 143 in one line', async (_when, cue) => {
    const { home, postmasterStarted, postmasterStopped, cleanUp } = await checkoutThatHasRun();
    try {
      const { child, exited, output, seen } = spawnWatched(
        process.execPath,
        [join(__dirname, '..', 'dist', 'main.js')],
        {
          cwd: home,
          env: { ...process.env, DATABASE_URL: '', DATABASE_DIRECT_URL: '', PORT: '0', LOG_LEVEL: 'debug' },
        },
      );
      if (cue === 'postmaster.pid') {
        await postmasterStarted();
      } else {
        await seen(cue);
      }
      child.kill('SIGTERM');
      expect(await exited).toBe(143);
      const warnings = output()
        .split('\n')
        .filter((line) => /"level":"(warn|error|fatal)"/.test(line));
      expect(warnings).toEqual([expect.stringContaining('SIGTERM received while starting: stopping before serving')]);
      expect(postmasterStopped()).toBe(true);
    } finally {
      cleanUp();
    }
  });

  // The one-shot commands start the embedded PostgreSQL in a session of its own too. Node's
  // default action on SIGTERM exited at once, silently, and left it running.
  it.each([
    ['npm run migration:run', join('database', 'migrate.cli.js')],
    ['npm run purge', join('idempotency', 'purge.cli.js')],
  ])(
    'without DATABASE_URL, %s stopped by SIGTERM stops its PostgreSQL and exits 143 in one line',
    async (command, script) => {
      const { home, postmasterStarted, postmasterStopped, cleanUp } = await checkoutThatHasRun();
      try {
        const child = spawn(process.execPath, [join(__dirname, '..', 'dist', script)], {
          cwd: home,
          env: { ...process.env, DATABASE_URL: '', DATABASE_DIRECT_URL: '', DATABASE_POOL_MODE: '' },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stderr = '';
        child.stderr.on('data', (chunk) => (stderr += chunk));
        child.stdout.resume();
        const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
        await postmasterStarted();
        child.kill('SIGTERM');
        expect(await exited).toBe(143);
        expect(stderr).toContain(`SIGTERM received: ${command} stopped; what it committed stays`);
        expect(stderr).not.toMatch(/failed/i);
        expect(postmasterStopped()).toBe(true);
      } finally {
        cleanUp();
      }
    },
  );

  // The terminal sends Ctrl-C's SIGINT to the whole foreground process group. PostgreSQL,
  // in the server's group, would take it as a fast shutdown at once, ending the sessions of
  // the requests the server is draining.
  it('without DATABASE_URL, Ctrl-C (SIGINT to the process group) drains the request in flight before its PostgreSQL stops', async () => {
    const home = mkdtempSync(join(tmpdir(), 'kukopay-start-'));
    const pidFile = join(home, '.data', 'pg', 'postmaster.pid');
    let holder: Client | null = null;
    try {
      const server = await startServerProcess({ DATABASE_URL: '' }, home, { ownProcessGroup: true });
      const key = server.stdout.join('\n').match(/kuko_test_[A-Za-z0-9_-]{32}/)![0];
      const [postmaster, , , port] = readFileSync(pidFile, 'utf8').split('\n').map(Number);
      const headers = { 'X-Api-Key': key, 'Content-Type': 'application/json' };
      const created = await fetch(`${server.url}/v1/orders`, {
        method: 'POST',
        headers,
        body: JSON.stringify(orderBody()),
      });
      const orderId = ((await created.json()) as { data: { id: string } }).data.id;

      // The order's row held, so that closing it waits in PostgreSQL while the signal comes.
      const password = readFileSync(join(home, '.data', 'pg-password'), 'utf8').trim();
      holder = new Client({ host: '127.0.0.1', port, user: 'postgres', password, database: 'kukopay' });
      holder.on('error', () => undefined); // ended by PostgreSQL itself when the test fails
      await holder.connect();
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM orders WHERE id = $1 FOR UPDATE', [orderId]);
      const closing = fetch(`${server.url}/v1/orders/${orderId}/close`, {
        method: 'POST',
        headers: { 'X-Api-Key': key },
      });
      await waitForLockWaiters(holder);

      process.kill(-server.child.pid!, 'SIGINT');
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(isAlive(postmaster)).toBe(true);
      await holder.query('COMMIT');
      await holder.end();
      holder = null;

      expect((await closing).status).toBe(200);
      expect(await server.exited).toBe(0);
      expect(isAlive(postmaster)).toBe(false);
      expect(server.stdout.filter((line) => /"level":"(error|fatal)"/.test(line))).toEqual([]);
    } finally {
      await holder?.end().catch(() => undefined);
      if (existsSync(pidFile)) {
        const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
        if (isAlive(pid)) process.kill(pid, 'SIGINT');
      }
      rmSync(home, { recursive: true, force: true });
    }
  });

  // Two first starts at once on a fresh checkout (two terminals, or a process manager
  // starting the service and `npm run worker` together) both ran initdb on .data/pg, or
  // both started PostgreSQL on it: one failed with a raw initdb or PostgreSQL error.
  it('without DATABASE_URL, two first starts at once make one cluster: one starts it, the other waits and borrows it', async () => {
    for (let round = 1; round <= 3; round++) {
      const home = mkdtempSync(join(tmpdir(), 'kukopay-start-'));
      const pidFile = join(home, '.data', 'pg', 'postmaster.pid');
      const servers: ServerProcess[] = [];
      try {
        const starts = await Promise.allSettled([0, 1].map(() => startServerProcess({ DATABASE_URL: '' }, home)));
        for (const start of starts) if (start.status === 'fulfilled') servers.push(start.value);
        expect({
          round,
          failed: starts.flatMap((start) => (start.status === 'rejected' ? [String(start.reason)] : [])),
        }).toEqual({ round, failed: [] });
        for (const server of servers) expect((await fetch(`${server.url}/health`)).status).toBe(200);

        // One server, started by the process named in pg-owner; the other said it borrows it.
        const owner = Number(readFileSync(join(home, '.data', 'pg-owner'), 'utf8'));
        const [starter, borrower] = servers[0].child.pid === owner ? servers : [servers[1], servers[0]];
        expect(starter.child.pid).toBe(owner);
        expect(borrower.stdout.join('\n')).toContain(`reusing the PostgreSQL of the running process ${owner}`);
        expect(starter.stdout.join('\n')).not.toContain('reusing the PostgreSQL');
        expect(readdirSync(join(home, '.data')).sort()).toEqual(['pg', 'pg-owner', 'pg-password']);
        // The demo merchant is created and its key printed once, by one of them.
        expect(servers.filter((server) => /Demo merchant .* created/.test(server.stdout.join('\n')))).toHaveLength(1);
      } finally {
        for (const server of servers) await server.kill('SIGKILL');
        if (existsSync(pidFile)) {
          const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
          if (isAlive(pid)) process.kill(pid, 'SIGINT');
          while (isAlive(pid)) await new Promise((resolve) => setTimeout(resolve, 20));
        }
        rmSync(home, { recursive: true, force: true });
      }
    }
  }, 120_000);

  it('without DATABASE_URL keeps its data in .data/, lends its PostgreSQL to other commands, adopts the one a kill -9 left, and stops it on SIGTERM and SIGHUP', async () => {
    // A directory of its own stands for a fresh checkout: `.data/` is created there.
    const home = mkdtempSync(join(tmpdir(), 'kukopay-start-'));
    const env = { DATABASE_URL: '' };
    try {
      const first = await startServerProcess(env, home);
      const key = first.stdout.join('\n').match(/kuko_test_[A-Za-z0-9_-]{32}/)![0];
      const postmaster = Number(readFileSync(join(home, '.data', 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
      const firstAccount = () => fetch(`${first.url}/v1/account`, { headers: { 'X-Api-Key': key } });

      // `npm run purge` beside the running service borrows its PostgreSQL and leaves it up.
      const purge = spawnSync(process.execPath, [join(__dirname, '..', 'dist', 'idempotency', 'purge.cli.js')], {
        cwd: home,
        env: { ...process.env, ...env },
        encoding: 'utf8',
        timeout: 20000,
      });
      expect(purge.status).toBe(0);
      expect(purge.stderr).toContain(`reusing the PostgreSQL of the running process ${first.child.pid}`);
      expect(isAlive(postmaster)).toBe(true);
      expect((await firstAccount()).status).toBe(200);

      await first.kill('SIGKILL');
      expect(isAlive(postmaster)).toBe(true);

      const second = await startServerProcess(env, home);
      const account = await fetch(`${second.url}/v1/account`, { headers: { 'X-Api-Key': key } });
      expect(account.status).toBe(200);
      expect(((await account.json()) as { data: { name: string } }).data.name).toBe('Demo merchant');
      // Created and printed on the first run only.
      expect(second.stdout.join('\n')).not.toMatch(/kuko_test_/);
      expect(second.stdout.join('\n')).toContain('reusing the PostgreSQL left running');
      second.child.kill('SIGTERM');
      await second.exited;
      expect(isAlive(postmaster)).toBe(false);
      expect(existsSync(join(home, '.data', 'pg', 'PG_VERSION'))).toBe(true);

      // A closed terminal (SIGHUP) drains and stops the PostgreSQL the same way.
      const third = await startServerProcess(env, home);
      const restarted = Number(readFileSync(join(home, '.data', 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
      third.child.kill('SIGHUP');
      expect(await third.exited).toBe(0);
      expect(isAlive(restarted)).toBe(false);
    } finally {
      const pidFile = join(home, '.data', 'pg', 'postmaster.pid');
      if (existsSync(pidFile)) {
        const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
        if (isAlive(pid)) process.kill(pid, 'SIGINT');
      }
      rmSync(home, { recursive: true, force: true });
    }
  });
});

/**
 * A checkout that has run before: its cluster exists, so the next start only starts it.
 * The waits and checks read its postmaster.pid; cleanUp ends a postmaster left running.
 */
async function checkoutThatHasRun() {
  const home = mkdtempSync(join(tmpdir(), 'kukopay-start-'));
  const pidFile = join(home, '.data', 'pg', 'postmaster.pid');
  const postmaster = () => (existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').split('\n')[0]) : null);
  const cleanUp = () => {
    const pid = postmaster();
    if (pid !== null && isAlive(pid)) process.kill(pid, 'SIGINT');
    rmSync(home, { recursive: true, force: true });
  };
  try {
    const first = await startServerProcess({ DATABASE_URL: '' }, home);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
  } catch (error) {
    cleanUp();
    throw error;
  }
  return {
    home,
    /** Resolves once a new start has written postmaster.pid (PostgreSQL starting, not yet ready). */
    postmasterStarted: async () => {
      while (!existsSync(pidFile)) await new Promise((resolve) => setTimeout(resolve, 5));
    },
    postmasterStopped: () => {
      const pid = postmaster();
      return pid === null || !isAlive(pid);
    },
    cleanUp,
  };
}

/** A process whose stdout (or stderr) is gathered, with a way to wait until it has printed something. */
function spawnWatched(command: string, args: string[], options: SpawnOptions, stream: 'stdout' | 'stderr' = 'stdout') {
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let output = '';
  const waiters: { text: string; resolve: () => void }[] = [];
  child[stream === 'stdout' ? 'stderr' : 'stdout']!.resume();
  child[stream]!.on('data', (chunk) => {
    output += chunk;
    for (const waiter of waiters.filter(({ text }) => output.includes(text))) waiter.resolve();
  });
  const seen = (text: string) =>
    new Promise<void>((resolve) => (output.includes(text) ? resolve() : waiters.push({ text, resolve })));
  return { child, exited, output: () => output, seen };
}
