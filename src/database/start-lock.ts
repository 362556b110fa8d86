/**
 * One start at a time of the embedded PostgreSQL in a directory. Two first starts at once
 * (two terminals, a process manager starting the service and the worker together) both
 * ran initdb on the same directory, or both started PostgreSQL on it, and one failed with
 * a raw initdb or PostgreSQL error. Under this lock the second waits, then finds the
 * server the first started and borrows it, as beside any running one (docs/operations.md).
 *
 * The lock is a file naming its holder's PID, created atomically and stale once that
 * process has ended, as postmaster.pid is: Node has no flock(), and a lock only its
 * holder removes would block every later start after a kill -9. It is the simplest lock
 * that survives its holder's death; what that holder left half done is made harmless by
 * initialising the cluster aside and renaming it into place (embedded-postgres.ts).
 */
import { basename } from 'node:path';
import { link, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { commandLine, isAlive } from './postmaster-process';

/** Beyond a first initdb and a crash recovery; past it the waiter says who it waited for. */
const WAIT_MS = 60_000;
const PAUSE_MS = 50;

/** Takes the lock `file`, waiting while another start holds it; resolves with its release. */
export async function takeStartLock(
  file: string,
  what: string,
  notice: (line: string) => void,
): Promise<() => Promise<void>> {
  const deadline = Date.now() + WAIT_MS;
  for (let said = ''; ;) {
    if (await create(file)) return () => rm(file, { force: true });
    const holder = await holderOf(file);
    if (holder === null) continue; // released meanwhile
    const starting = isStarting(holder);
    const line = starting
      ? `waiting for process ${holder}, which is starting ${what}`
      : `process ${holder} ended while starting ${what}; no longer waiting for it`;
    if (line !== said) notice(line);
    said = line;
    if (!starting && (await breakLock(file, holder))) continue;
    if (Date.now() > deadline) {
      throw new Error(
        `gave up after ${WAIT_MS / 1000} s waiting for process ${holder} to start ${what}; ` +
          `if no such start is running, delete ${file} and start again`,
      );
    }
    await new Promise((resolvePause) => setTimeout(resolvePause, PAUSE_MS));
  }
}

/**
 * Creates the lock naming this process, false if it exists. Written aside, then linked
 * into place (link fails on an existing name, as O_EXCL does): a waiter never reads a
 * lock whose PID is not written yet.
 */
async function create(file: string): Promise<boolean> {
  const aside = `${file}.${process.pid}`;
  await writeFile(aside, `${process.pid}\n`);
  try {
    await link(aside, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    await rm(aside, { force: true });
  }
}

/** The PID the lock names (0 if none can be read: a crash wrote no content); null once it is gone. */
async function holderOf(file: string): Promise<number | null> {
  try {
    const pid = Number((await readFile(file, 'utf8')).trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : 0;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/**
 * Whether `pid` may still be the start that took the lock: alive, not this process (a
 * container restarted after a kill gives its processes the same PIDs again), and, where
 * /proc tells, the same program as this one (after a reboot the PID may be anyone's).
 */
function isStarting(pid: number): boolean {
  if (pid === 0 || pid === process.pid || !isAlive(pid)) return false;
  if (!existsSync('/proc/self/cmdline')) return true;
  const argv = commandLine(pid);
  return argv === null || basename(argv[0] ?? '') === basename(process.execPath);
}

/**
 * Removes the lock of `holder`, which ended without releasing it. Several waiters may find
 * it at once, and one of them may already have taken the lock again: only the waiter that
 * creates `<file>.<holder>.broken` removes it, after checking that it still names
 * `holder`. A lock naming a PID that has ended can be removed by no one else meanwhile.
 * False while another waiter is removing it.
 */
async function breakLock(file: string, holder: number): Promise<boolean> {
  const breaking = `${file}.${holder}.broken`;
  try {
    await writeFile(breaking, `${process.pid}\n`, { flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    if ((await holderOf(file)) === holder) await rm(file, { force: true });
    return true;
  } finally {
    await rm(breaking, { force: true });
  }
}
