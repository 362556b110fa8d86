import type { PoolClient } from 'pg';
import { randomBytes } from 'node:crypto';
import type { DataSource, DataSourceOptions } from 'typeorm';
import type { AppConfig } from '../config/app-config';
import { dataSourceOptions, SESSION_SETTINGS, transactionSettings } from './data-source-options';
import { DbOptions, settingStatement } from './db';
import { describeDatabaseUrl } from './describe-url';
import { literal } from './literal';

/**
 * How Db reaches DATABASE_URL, and the checks that the database behind it is set up for
 * that, shared by the service (DatabaseModule) and `npm run purge`.
 */
export type DatabaseConfig = Pick<
  AppConfig,
  | 'databasePoolMode'
  | 'databasePoolPreparedStatements'
  | 'databasePoolRoleSettings'
  | 'databasePoolSize'
  | 'databaseDirectUrl'
  | 'databaseStartTimeoutMs'
>;

/** What Db is given for a DATABASE_URL and the configuration. */
export function dbOptions(url: string, config: DatabaseConfig): DbOptions {
  const mode = config.databasePoolMode;
  return {
    mode,
    poolSize: config.databasePoolSize,
    ...(mode === 'transaction' ? { settings: transactionSettings(url) } : {}),
    settingsOnRole: config.databasePoolRoleSettings,
    preparedStatements: config.databasePoolPreparedStatements,
  };
}

/** The TypeORM data source (its pool) that matches Db's `options`. */
export function dataSourceFor(url: string, options: DbOptions): DataSourceOptions {
  return dataSourceOptions(url, { max: options.poolSize, mode: options.mode, pipeline: options.preparedStatements });
}

/**
 * Stops a start-up on a database that answers but is not set up as `options` say: limits
 * that did not arrive, settings PostgreSQL refuses, prepared statements a pooler would lose.
 */
export async function checkDatabaseSetup(dataSource: DataSource, options: DbOptions): Promise<void> {
  if (!options.settings) await checkStartupOptions(dataSource, 'DATABASE_URL');
  else if (options.settingsOnRole) await checkSettingsOnRole(dataSource, options.settings);
  else await checkSettings(dataSource, options.settings);
  if (options.preparedStatements) await checkPreparedStatementsKept(dataSource);
}

/** A database that answers but is set up so that the service must not run on it. */
export class SetupRefused extends Error {}

/**
 * A start-up failure that says which of the two URLs it came from, without its password:
 * the server, `npm run migration:run` and the start-up checks word it alike. A refused
 * setup already names its variable, and stays a SetupRefused: it is not retried.
 */
export function failedOn(variable: DatabaseUrlVariable, url: string): (error: unknown) => never {
  return (error) => {
    if (error instanceof SetupRefused) throw error;
    throw new Error(`${variable} (${describeDatabaseUrl(url)}): ${(error as Error).message}`, { cause: error });
  };
}

/**
 * Behind a transaction pooler the settings are applied with every statement, not at
 * connection: one that PostgreSQL refuses (a misspelt name in DATABASE_URL's options)
 * stops the start-up here instead of failing every request.
 */
async function checkSettings(dataSource: DataSource, settings: Readonly<Record<string, string>>): Promise<void> {
  await dataSource.query(settingStatement(settings)).catch(refusedOptions);
}

function refusedOptions(error: Error): never {
  throw new SetupRefused(`DATABASE_URL: PostgreSQL refused its options (${error.message})`);
}

/**
 * DATABASE_POOL_ROLE_SETTINGS=on: Db sends no settings, relying on the role (or the
 * database) to set each one on every server connection the pooler opens. Checked on one
 * of them, in one transaction: each setting as the connection started, against the same
 * once the service's value is applied, which PostgreSQL writes the way it writes its own
 * (5000ms and 5s alike read 5s). One that differs, or that an earlier client's SET on this
 * server connection put there, stops the start-up, naming what to run.
 */
async function checkSettingsOnRole(dataSource: DataSource, settings: Readonly<Record<string, string>>): Promise<void> {
  const names = Object.keys(settings);
  const read =
    // missing_ok: a name PostgreSQL does not know is refused by set_config below, by name.
    'SELECT current_user AS role, n.name, current_setting(n.name, true) AS value, ' +
    '(SELECT source FROM pg_settings s WHERE lower(s.name) = lower(n.name)) AS source ' +
    'FROM unnest($1::text[]) WITH ORDINALITY AS n(name, position) ORDER BY n.position';
  type Row = { role: string; name: string; value: string | null; source: string | null };
  const runner = dataSource.createQueryRunner();
  let missing: { role: string; name: string; found: string | null; wanted: string | null }[];
  try {
    const client = (await runner.connect()) as PoolClient;
    await client.query('BEGIN');
    try {
      const before = (await client.query<Row>(read, [names])).rows;
      await client.query(settingStatement(settings)).catch(refusedOptions);
      const after = (await client.query<Row>(read, [names])).rows;
      missing = before
        .map((row, i) => ({ ...row, found: row.value, wanted: after[i]!.value }))
        .filter(({ found, wanted, source }) => found !== wanted || source === 'session');
    } finally {
      await client.query('ROLLBACK');
    }
  } finally {
    await runner.release();
  }
  if (missing.length === 0) return;
  const role = `"${missing[0]!.role.replace(/"/g, '""')}"`;
  const found = missing.map(
    (each) => `${each.name} (${each.found ?? 'unset'} here, the service runs with ${each.wanted})`,
  );
  const fixes = missing.map((each) => `ALTER ROLE ${role} SET ${each.name} = ${literal(each.wanted ?? '')}`);
  throw new SetupRefused(
    `DATABASE_POOL_ROLE_SETTINGS=on, but the role does not set ${found.join(', ')}: run ${fixes.join('; ')}, ` +
      'then have the pooler open new server connections (PgBouncer: RECONNECT), or set it off (docs/operations.md)',
  );
}

/** The two URLs a connection can come from, and what to do when one is a transaction pooler. */
const POOLER_ADVICE = {
  DATABASE_URL:
    'if DATABASE_URL is a transaction pooler such as PgBouncer, set DATABASE_POOL_MODE=transaction and DATABASE_DIRECT_URL (docs/operations.md)',
  DATABASE_DIRECT_URL:
    'migrations and the job queue need a session of their own, so DATABASE_DIRECT_URL must reach PostgreSQL itself, not a transaction pooler (docs/operations.md)',
} as const;

export type DatabaseUrlVariable = keyof typeof POOLER_ADVICE;

/**
 * Session pooling, migrations and the job queue rely on the limits sent as startup
 * options (data-source-options.ts). A transaction pooler drops them (or refuses them); a
 * PostgreSQL that did not receive them reports the limits as coming from anywhere but the
 * client. Then the service would run without lock_timeout and, through PgBouncer, trip
 * over its own prepared statements, or leave a session lock on a server connection that
 * PgBouncer lends to others: it stops here and names the setting that was forgotten.
 */
export async function checkStartupOptions(dataSource: DataSource, variable: DatabaseUrlVariable): Promise<void> {
  const missing = (await dataSource.query(
    `SELECT name FROM pg_settings WHERE name = ANY($1) AND source <> 'client' ORDER BY name`,
    [Object.keys(SESSION_SETTINGS)],
  )) as { name: string }[];
  if (missing.length === 0) return;
  throw new SetupRefused(
    `${variable}: PostgreSQL did not receive the connection's startup options (${missing.map((row) => row.name).join(', ')} not set); ` +
      POOLER_ADVICE[variable],
  );
}

/**
 * DATABASE_POOL_PREPARED_STATEMENTS=on needs a pooler that keeps prepared statements:
 * PgBouncer 1.21 and later, in transaction pooling, prepares each one on whichever server
 * connection needs it, under names of its own (PGBOUNCER_1 …). One that passes the
 * statement through under our name (PgBouncer before 1.21, max_prepared_statements = 0,
 * session pooling, or no pooler at all) would lose it on its next server connection,
 * and the requests sent there would fail: it stops here instead.
 */
async function checkPreparedStatementsKept(dataSource: DataSource): Promise<void> {
  const runner = dataSource.createQueryRunner();
  let passedThrough: boolean;
  try {
    const client = (await runner.connect()) as PoolClient;
    // Its own name each time: one passed through stays on the server connection.
    const probe = `kuko_startup_probe_${randomBytes(6).toString('hex')}`;
    const { rows } = await client.query<{ ours: boolean }>({
      name: probe,
      text: `SELECT count(*) > 0 AS ours FROM pg_prepared_statements WHERE name = '${probe}'`,
    });
    passedThrough = rows[0].ours;
  } finally {
    await runner.release();
  }
  if (!passedThrough) return;
  throw new SetupRefused(
    'DATABASE_POOL_PREPARED_STATEMENTS=on, but DATABASE_URL passes prepared statements through to PostgreSQL instead of ' +
      'keeping them: use PgBouncer 1.21 or later in transaction pooling with max_prepared_statements above 0, ' +
      'or set it off (docs/operations.md)',
  );
}
