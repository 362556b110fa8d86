import type { Pool } from 'pg';
import type { AdvisoryLock } from '../../src/database/advisory-locks';
import request from 'supertest';
import { startServerProcess } from './server-process';

/**
 * Installs a BEFORE INSERT trigger whose PL/pgSQL `body` runs for each new row (as NEW),
 * to inject real database faults: a slow statement, a lost connection, an error, a
 * deadlock. Returns the function that removes it.
 */
export async function injectFault(pool: Pool, table: string, body: string): Promise<() => Promise<void>> {
  const name = `fault_${Math.random().toString(36).slice(2, 10)}`;
  await pool.query(`
    CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      ${body}
      RETURN NEW;
    END $$;
    CREATE TRIGGER ${name} BEFORE INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION ${name}();`);
  return async () => {
    await pool.query(`DROP TRIGGER ${name} ON ${table}; DROP FUNCTION ${name}();`);
  };
}

/** Waits until no advisory lock is held in the pool's database (a killed request's transaction is gone). */
export function waitForNoAdvisoryLocks(pool: Pool): Promise<void> {
  return waitForAdvisoryLocks(pool, false);
}

/** Waits until a request holds an Idempotency-Key lock in the pool's database. */
export function waitForAnAdvisoryLock(pool: Pool): Promise<void> {
  return waitForAdvisoryLocks(pool, true);
}

/** Waits until a session of the pool's database waits for `lock`, which another holds. */
export function waitForAWaiterOn(pool: Pool, lock: AdvisoryLock): Promise<void> {
  return waitForAdvisoryLocks(pool, true, { granted: false, lock });
}

async function waitForAdvisoryLocks(
  pool: Pool,
  present: boolean,
  { granted = true, lock }: { granted?: boolean; lock?: AdvisoryLock } = {},
  timeoutMs = 10000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const which = lock ? 'AND classid::bigint = $2 AND objid::bigint = $3' : '';
  for (;;) {
    const { rowCount } = await pool.query(
      `SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted = $1 ${which}
          AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      lock ? [granted, lock.classid, lock.objid] : [granted],
    );
    if ((rowCount ?? 0) > 0 === present) return;
    if (Date.now() > deadline) {
      throw new Error(
        present ? `no advisory lock was ${granted ? 'taken' : 'waited for'}` : 'advisory locks still held',
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export interface KillMidRequest {
  pool: Pool;
  env: Record<string, string>;
  path: string;
  apiKey: string;
  idempotencyKey: string;
  body: object;
}

/**
 * Starts the built server as a process, sends one keyed POST, and SIGKILLs the server
 * while that request holds its key (mid-transaction; make it slow with injectFault).
 * Resolves once PostgreSQL has rolled the dead request back.
 */
export async function killServerMidRequest(options: KillMidRequest): Promise<void> {
  const server = await startServerProcess(options.env);
  try {
    const answer = request(server.url)
      .post(options.path)
      .set('X-Api-Key', options.apiKey)
      .set('Idempotency-Key', options.idempotencyKey)
      .send(options.body)
      .then(
        (response) => `answered ${response.status}`,
        () => 'connection lost',
      );
    await waitForAnAdvisoryLock(options.pool);
    await server.kill('SIGKILL');
    if ((await answer) !== 'connection lost') throw new Error(`the request was ${await answer} before the kill`);
    await waitForNoAdvisoryLocks(options.pool);
  } finally {
    await server.kill();
  }
}
