import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { basename, resolve } from 'node:path';

export interface PostmasterStart {
  /** The `postgres` binary. */
  binary: string;
  dataDir: string;
  port: number;
  /** More command-line arguments (`-c name=value` …). */
  flags: string[];
  /** Every line PostgreSQL writes (its log goes to stderr). */
  log: (text: string) => void;
  /** In a session of its own, out of this process's group (below). */
  ownSession: boolean;
}

const READY = 'database system is ready to accept connections';

/**
 * Starts a postmaster and resolves once it accepts connections. With `ownSession` it runs
 * in a session of its own (setsid, as `pg_ctl start` does): in the service's process
 * group it would get the SIGINT a terminal sends the whole group on Ctrl-C, PostgreSQL's
 * fast shutdown, and end every session at once while the service drains the requests in
 * flight, which then fail. The service stops it itself, after draining. As root it runs
 * as the user `postgres`, since PostgreSQL refuses to run as root.
 */
export function startPostmaster(start: PostmasterStart): Promise<ChildProcess> {
  return new Promise((resolveStart, reject) => {
    const child = spawn(start.binary, ['-D', start.dataDir, '-p', String(start.port), ...start.flags], {
      ...postgresUser(),
      detached: start.ownSession,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, LC_MESSAGES: 'C' },
    });
    let ready = false;
    let lastOutput = '';
    // Read for as long as it runs: a full pipe would block PostgreSQL's next log line.
    child.stderr!.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      start.log(text.trim());
      if (ready) return;
      lastOutput = (lastOutput + text).slice(-2000);
      if (lastOutput.includes(READY)) {
        ready = true;
        resolveStart(child);
      }
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (!ready) {
        const how = signal ?? `exit code ${code}`;
        reject(
          new Error(`PostgreSQL stopped while starting (${how}): ${lastOutput.trim().split('\n').slice(-3).join(' ')}`),
        );
      }
    });
  });
}

/** Fast shutdown (SIGINT) of a postmaster this process started, then waits for it to exit. */
export async function stopStartedPostmaster(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolveExit) => child.once('exit', resolveExit));
  child.kill('SIGINT');
  await exited;
}

function postgresUser(): { uid?: number; gid?: number } {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return {};
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

/**
 * Whether `pid` is a PostgreSQL postmaster serving `dataDir`, read from
 * /proc/<pid>/cmdline (`…/postgres -D <dataDir> …`, as startPostmaster starts it). A PID
 * from a stale postmaster.pid may since belong to any other process: it is adopted or
 * signalled only when this says yes. Without /proc (not Linux) nothing can be checked:
 * the PID is trusted, as before this check existed, rather than refusing to start or stop.
 */
export function isPostmasterOf(pid: number, dataDir: string): boolean {
  if (!existsSync('/proc/self/cmdline')) return true;
  const argv = commandLine(pid);
  if (argv === null || basename(argv[0] ?? '') !== 'postgres') return false;
  const at = argv.indexOf('-D');
  return at >= 0 && at + 1 < argv.length && samePath(argv[at + 1], dataDir);
}

/** The process's command line, for messages; null when it cannot be read. */
export function commandLine(pid: number): string[] | null {
  try {
    const raw = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return raw.split('\0').filter((part) => part !== '');
  } catch {
    return null;
  }
}

function samePath(a: string, b: string): boolean {
  const real = (path: string) => {
    try {
      return realpathSync(path);
    } catch {
      return resolve(path);
    }
  };
  return real(a) === real(b);
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
