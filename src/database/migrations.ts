import { DataSource } from 'typeorm';
import { ADVISORY_LOCKS, lockArgs } from './advisory-locks';
import { dataSourceOptions } from './data-source-options';

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
 */
export async function runMigrations(url: string): Promise<string[]> {
  const dataSource = new DataSource(dataSourceOptions(url, { max: 1 }));
  await dataSource.initialize();
  try {
    // Another runner's migrations may take longer than lock_timeout: wait for them, then
    // run under the service's limits again (RESET returns to the connection's own value).
    await dataSource.query(
      `SET lock_timeout = 0; SELECT pg_advisory_lock(${lockArgs(ADVISORY_LOCKS.migrations)}); RESET lock_timeout`,
    );
    return (await dataSource.runMigrations({ transaction: 'each' })).map((migration) => migration.name);
  } finally {
    await dataSource.destroy();
  }
}
