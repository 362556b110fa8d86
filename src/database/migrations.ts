import { setTimeout as sleep } from 'node:timers/promises';
import { DataSource } from 'typeorm';
import { ADVISORY_LOCKS, lockArgs } from './advisory-locks';
import { dataSourceOptions } from './data-source-options';
import { checkStartupOptions, DatabaseUrlVariable } from './database-setup';

/** Where a runner says it is waiting for the lock: at once (info), then every 10 s (warn). */
export interface MigrationLog {
  info(line: string): void;
  warn(line: string): void;
}

const SILENT: MigrationLog = { info: () => undefined, warn: () => undefined };

/** How often a runner tries the migration lock again, and how often it says it is waiting. */
const LOCK_RETRY_MS = 250;
const WAITING_LOG_EVERY_MS = 10_000;

/**
 * Applies pending migrations on a connection of their own and returns their names. Used by
 * `npm run migration:run` and at every start-up, on DATABASE_DIRECT_URL when it is set:
 * migrations need a session (a transaction pooler cannot give one), so they go to the
 * server directly.
 *
 * Runners take a session advisory lock first, so that instances starting at once on an
 * empty database wait for each other instead of creating the same tables side by side
 * (which fails one of them on a unique index of the catalogue). The pool has one
 * connection, so the lock and the migrations share its session; closing it releases the
 * lock whatever happened.
 *
 * Before the lock, the connection must prove it is a session of its own: through a
 * transaction pooler the lock would be taken on a server connection the pooler then lends
 * to others and never closes, held for good, and every later runner would wait on it.
 */
export async function runMigrations(
  url: string,
  { variable = 'DATABASE_URL', log = SILENT }: { variable?: DatabaseUrlVariable; log?: MigrationLog } = {},
): Promise<string[]> {
  const dataSource = new DataSource(dataSourceOptions(url, { max: 1 }));
  await dataSource.initialize();
  try {
    await checkStartupOptions(dataSource, variable);
    await takeMigrationLock(dataSource, log);
    return (await dataSource.runMigrations({ transaction: 'each' })).map((migration) => migration.name);
  } finally {
    await dataSource.destroy();
  }
}

/**
 * Another runner's migrations may take longer than any timeout, so the lock is waited for
 * as long as it takes, but not in silence: the runner says which PostgreSQL backend holds
 * it, once as information (instances starting together wait for each other), then as a
 * warning every ten seconds, so that a lock left behind can be found and ended.
 */
async function takeMigrationLock(dataSource: DataSource, log: MigrationLog): Promise<void> {
  const started = Date.now();
  let nextLog = started;
  for (;;) {
    const [{ locked }] = (await dataSource.query(
      `SELECT pg_try_advisory_lock(${lockArgs(ADVISORY_LOCKS.migrations)}) AS locked`,
    )) as { locked: boolean }[];
    if (locked) return;
    if (Date.now() >= nextLog) {
      const line = await waitingLine(dataSource, Date.now() - started);
      if (nextLog === started) log.info(line);
      else log.warn(line);
      nextLog += WAITING_LOG_EVERY_MS;
    }
    await sleep(LOCK_RETRY_MS);
  }
}

async function waitingLine(dataSource: DataSource, waitedMs: number): Promise<string> {
  const { classid, objid } = ADVISORY_LOCKS.migrations;
  const [holder] = (await dataSource.query(
    `SELECT a.pid, a.application_name, a.client_addr::text AS client, a.state,
            extract(epoch FROM now() - a.state_change)::int AS for_s
       FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.granted AND l.classid = $1 AND l.objid = $2 AND l.objsubid = 2
        AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    [classid, objid],
  )) as { pid: number; application_name: string; client: string | null; state: string | null; for_s: number }[];
  const waited = `waiting ${Math.round(waitedMs / 1000)} s for the migration lock (pg_locks classid ${classid}, objid ${objid})`;
  if (!holder) return `${waited}; its holder has just let it go`;
  return (
    `${waited}, held by PostgreSQL backend ${holder.pid} (application ${JSON.stringify(holder.application_name)}, ` +
    `client ${holder.client ?? 'local'}, ${holder.state ?? 'unknown'} for ${holder.for_s} s): another instance is ` +
    `migrating, or, if none is, the lock was left on a pooler's server connection; end it with ` +
    `SELECT pg_terminate_backend(${holder.pid})`
  );
}
