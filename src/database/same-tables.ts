import type { PoolClient } from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from './data-source-options';
import { DbOptions, settingStatement } from './db';
import { failedOn, SetupRefused } from './database-setup';

/** Where a URL's connections find the service's tables, with the settings requests run under. */
interface TablesSeen {
  /** The server, told apart by when it started (behind a pooler, the server it relays to). */
  server: string;
  database: string;
  search_path: string;
  /** The orders table found by name, as a statement of the service would find it; null: none. */
  orders: string | null;
}

const TABLES_SEEN = `SELECT extract(epoch FROM pg_postmaster_start_time())::text AS server, current_database() AS database,
  current_setting('search_path') AS search_path, to_regclass('orders')::oid::text AS orders`;

/**
 * Migrations (and the job queue's workers) use DATABASE_DIRECT_URL, requests DATABASE_URL:
 * two URLs that must reach the same tables. One that names another database, or options
 * with another search_path, would leave requests on tables the migrations never made (500
 * on every call while /health/ready says 200) or notifications queued where no worker
 * looks. So the start stops when the orders table the requests would use is not the one
 * the migrations made.
 */
export async function checkSameTables(pool: DataSource, options: DbOptions, directUrl: string): Promise<void> {
  const { migrated, served } = await whereEachLeads(pool, options, directUrl);
  // A database copied from another (CREATE DATABASE … TEMPLATE) has the same table oids.
  const same = (['server', 'database', 'orders'] as const).every((field) => served[field] === migrated[field]);
  if (same) return;
  const found = served.orders === null ? 'no orders table' : 'another orders table';
  throw new SetupRefused(
    `DATABASE_URL and DATABASE_DIRECT_URL must reach the same tables: the migrations ran through DATABASE_DIRECT_URL ` +
      `in ${where(migrated)}, and DATABASE_URL's requests find ${found} in ${where(served)}; ${POINT_BOTH}`,
  );
}

/**
 * The same before the migrations run, as far as it can be told then: one database on one
 * server. Two URLs that lead to two databases would have the migrations create every
 * table in the one the requests never use (another application's, say) before
 * checkSameTables refused the start.
 */
export async function checkSameDatabase(pool: DataSource, options: DbOptions, directUrl: string): Promise<void> {
  const { migrated, served } = await whereEachLeads(pool, options, directUrl);
  if (served.server === migrated.server && served.database === migrated.database) return;
  const elsewhere = served.database === migrated.database ? ' on another server' : '';
  throw new SetupRefused(
    `DATABASE_URL and DATABASE_DIRECT_URL must reach the same database: the migrations would run through ` +
      `DATABASE_DIRECT_URL in ${where(migrated)}, and DATABASE_URL's requests reach ${where(served)}${elsewhere}; ` +
      `nothing was migrated; ${POINT_BOTH}`,
  );
}

const POINT_BOTH = 'point both at the same database, with the same search_path in their options (docs/operations.md)';

const where = (seen: TablesSeen) => `database "${seen.database}" (search_path ${seen.search_path})`;

/** What DATABASE_DIRECT_URL's connections see, on one connection of their own, and what requests see. */
async function whereEachLeads(
  pool: DataSource,
  options: DbOptions,
  directUrl: string,
): Promise<{ migrated: TablesSeen; served: TablesSeen }> {
  const direct = new DataSource(dataSourceOptions(directUrl, { max: 1 }));
  await direct.initialize().catch(failedOn('DATABASE_DIRECT_URL', directUrl));
  let migrated: TablesSeen;
  try {
    [migrated] = (await direct.query(TABLES_SEEN)) as [TablesSeen];
  } finally {
    await direct.destroy();
  }
  return { migrated, served: await tablesSeenByRequests(pool, options) };
}

/** Behind a transaction pooler the settings (search_path among them) go with each transaction. */
async function tablesSeenByRequests(pool: DataSource, options: DbOptions): Promise<TablesSeen> {
  if (!options.settings || options.settingsOnRole) return ((await pool.query(TABLES_SEEN)) as TablesSeen[])[0]!;
  const runner = pool.createQueryRunner();
  try {
    const client = (await runner.connect()) as PoolClient;
    await client.query('BEGIN');
    try {
      await client.query(settingStatement(options.settings));
      return (await client.query<TablesSeen>(TABLES_SEEN)).rows[0]!;
    } finally {
      await client.query('ROLLBACK');
    }
  } finally {
    await runner.release();
  }
}
