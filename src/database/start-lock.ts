/**
 * One start at a time of the embedded PostgreSQL in a directory. Two first starts at once
 * (two terminals, a process manager starting the service and the worker together) both
 * ran initdb on the same directory, or both started PostgreSQL on it, and one failed with
 * a raw initdb or PostgreSQL error. Under this lock the second waits, then finds the
 * server the first started and borrows it, as beside any running one (docs/operations.md).
 *
 * The lock is a file naming its holder: its PID and, where /proc tells, when that process
 * started, so that a PID reused by another process (after a reboot, in a restarted
 * container) is not taken for the holder. It is created atomically and is stale once its
 * holder has ended, as postmaster.pid is: Node has no flock(), and a lock only its holder
 * removes would block every later start after a kill -9. What a holder left half done is
 * made harmless by initialising the cluster aside and renaming it into place
 * (embedded-postgres.ts). Processes that see different PIDs (two containers sharing the
 * directory) cannot tell each other's liveness: one database directory per container.
 */
import { readFileSync } from 'node:fs';
import { link, readFile, rm, writeFile } from 'node:fs/promises';
import { isAlive } from './postmaster-process';

/** At least this long; longer where the holder may itself wait for a database (startTimeoutMs). */
const WAIT_MS = 60_000;
const PAUSE_MS = 50;

/**
 * Takes the lock `file`, waiting while another start holds it, at most the longer of 60 s
 * and `holderMayWaitMs` and 30 s more; resolves with its release.
 */
export async function takeStartLock(
  file: string,
  what: string,
  notice: (line: string) => void,
  holderMayWaitMs = 0,
): Promise<() => Promise<void>> {
  const waitMs = Math.max(WAIT_MS, holderMayWaitMs + 30_000);
  const deadline = Date.now() + waitMs;
  const token = ownToken();
  for (let said = ''; ;) {
    if (await create(file, token)) return () => releaseIfOurs(file, token);
    const holder = await holderOf(file);
    if (holder === null) continue; // released meanwhile
    const starting = isStarting(holder);
    const line = starting
      ? `waiting for process ${holder.pid}, which is starting ${what}`
      : `process ${holder.pid} ended while starting ${what}; no longer waiting for it`;
    if (line !== said) notice(line);
    said = line;
    if (!starting && (await breakLock(file, holder.token))) continue;
    if (Date.now() > deadline) {
      throw new Error(
        `gave up after ${Math.round(waitMs / 1000)} s waiting for process ${holder.pid} to start ${what}; ` +
          `if no such start is running, delete ${file} and start again`,
      );
    }
    await new Promise((resolvePause) => setTimeout(resolvePause, PAUSE_MS));
  }
}

interface Holder {
  pid: number;
  /** When it started, in clock ticks since boot (/proc/<pid>/stat); null where unknown. */
  startedAt: string | null;
  /** The lock's content, as written. */
  token: string;
}

/** "<pid> <start time>", or "<pid>" where /proc is not there. */
function ownToken(): string {
  const startedAt = startTimeOf(process.pid);
  return startedAt === null ? `${process.pid}` : `${process.pid} ${startedAt}`;
}

/** Field 22 of /proc/<pid>/stat, after the command name (which may hold spaces and parentheses). */
export function startTimeOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/**
 * Creates the lock naming this process, false if it exists. Written aside, then linked
 * into place (link fails on an existing name, as O_EXCL does): a waiter never reads a
 * lock whose content is not written yet. Where the file system has no hard links, the
 * lock is created with O_EXCL, its content written just after.
 */
async function create(file: string, token: string): Promise<boolean> {
  const aside = `${file}.${process.pid}`;
  await writeFile(aside, `${token}\n`);
  try {
    await link(aside, file);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw error;
    return writeFile(file, `${token}\n`, { flag: 'wx' }).then(
      () => true,
      (failed: NodeJS.ErrnoException) => {
        if (failed.code === 'EEXIST') return false;
        throw failed;
      },
    );
  } finally {
    await rm(aside, { force: true });
  }
}

/** Removes the lock if it is still this process's: one broken meanwhile belongs to another start. */
async function releaseIfOurs(file: string, token: string): Promise<void> {
  const holder = await holderOf(file);
  if (holder?.token === token) await rm(file, { force: true });
}

/** Who the lock names (pid 0 if it cannot be read: written by a crash, or not yet); null once it is gone. */
async function holderOf(file: string): Promise<Holder | null> {
  let token: string;
  try {
    token = (await readFile(file, 'utf8')).trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const [pidText, startedAt] = token.split(' ');
  const pid = Number(pidText);
  return { pid: Number.isSafeInteger(pid) && pid > 0 ? pid : 0, startedAt: startedAt ?? null, token };
}

/** Whether the lock's holder may still be the start that took it: the same process, alive. */
function isStarting({ pid, startedAt }: Holder): boolean {
  if (pid === 0 || pid === process.pid || !isAlive(pid)) return false;
  if (startedAt === null) return true;
  const now = startTimeOf(pid);
  return now === null || now === startedAt;
}

/**
 * Removes the lock naming `token`, whose holder ended without releasing it. Several
 * waiters may find it at once, and one of them may already have taken the lock again:
 * only the waiter that creates `<file>.broken` removes it, after checking that it still
 * names `token`. A `.broken` left by a waiter that died meanwhile is removed in turn.
 * False while another waiter is breaking it.
 */
async function breakLock(file: string, token: string): Promise<boolean> {
  const breaking = `${file}.broken`;
  try {
    await writeFile(breaking, `${process.pid}\n`, { flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const breaker = await holderOf(breaking);
    if (breaker !== null && !isAlive(breaker.pid)) await rm(breaking, { force: true });
    return false;
  }
  try {
    if ((await holderOf(file))?.token === token) await rm(file, { force: true });
    return true;
  } finally {
    await rm(breaking, { force: true });
  }
}
