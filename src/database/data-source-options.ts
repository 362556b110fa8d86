import { join } from 'node:path';
import type { DataSourceOptions } from 'typeorm';
import type { PoolMode } from '../config/app-config';
import { urlSettings } from '../config/url-settings';

/**
 * Migrations are TypeScript under migrations/ and compiled to dist/migrations/. Running
 * from source (tests) this file is src/database/*.ts; built, it is dist/database/*.js.
 */
const MIGRATIONS = __filename.endsWith('.ts')
  ? join(__dirname, '..', '..', 'migrations', '*.ts')
  : join(__dirname, '..', 'migrations', '*.js');

/**
 * The server-side limits every connection of the service runs with (docs/operations.md):
 * a statement waiting this long on a row lock fails (503, retryable) instead of piling
 * up; no statement runs away; no transaction is left open by a stuck client.
 */
export const SESSION_SETTINGS: Readonly<Record<string, string>> = {
  lock_timeout: '5s',
  statement_timeout: '60s',
  idle_in_transaction_session_timeout: '60s',
};

export interface PoolOptions {
  /** Connections per process. */
  max?: number;
  /** `transaction` behind PgBouncer: no startup options (Db sends the settings with each statement). */
  mode?: PoolMode;
  /**
   * Behind a transaction pooler that keeps prepared statements: pg's pipeline mode, in
   * which Db writes BEGIN, the settings and a prepared statement without waiting between
   * them (db.ts).
   */
  pipeline?: boolean;
}

/** How long a request may wait for a pooled connection before it is answered 503. */
export const ACQUIRE_TIMEOUT_MS = 5000;

export function dataSourceOptions(url: string, pool: PoolOptions = {}): DataSourceOptions {
  const { connectionString, options } = withServerSettings(url, pool.mode ?? 'session');
  return {
    type: 'postgres',
    url: connectionString,
    // Schema changes only through reviewed migrations, applied at start-up by
    // runMigrations (one runner at a time, on a session), never by TypeORM on its own.
    synchronize: false,
    migrationsRun: false,
    migrations: [MIGRATIONS],
    migrationsTransactionMode: 'each',
    entities: [],
    logging: false,
    extra: {
      max: pool.max ?? 20,
      connectionTimeoutMillis: ACQUIRE_TIMEOUT_MS,
      ...(options ? { options } : {}),
      ...(pool.pipeline ? { pipeline: true } : {}),
      application_name: 'kukopay-api',
    },
  };
}

/**
 * The URL without its `options` parameter, and the startup options: ours first, then
 * the URL's, so that `?options=-c search_path=…` adds to our limits instead of silently
 * replacing them (pg lets a URL parameter override the pool's own). A setting the URL
 * names explicitly, such as its own lock_timeout, still wins, as PostgreSQL applies the
 * last `-c`. Behind a transaction pooler there are no startup options at all: PgBouncer
 * drops or refuses them, and Db applies `transactionSettings` to every statement instead.
 */
export function withServerSettings(url: string, mode: PoolMode): { connectionString: string; options?: string } {
  const parsed = new URL(url);
  const fromUrl = parsed.searchParams.get('options');
  parsed.searchParams.delete('options');
  if (mode === 'transaction') return { connectionString: parsed.toString() };
  const ours = Object.entries({ ...SESSION_SETTINGS, TimeZone: 'UTC' }).map(([name, value]) => `-c ${name}=${value}`);
  return { connectionString: parsed.toString(), options: [...ours, ...(fromUrl ? [fromUrl] : [])].join(' ') };
}

/**
 * What Db sets in every transaction behind a transaction pooler: our limits, then the
 * URL's own settings, which win as they do in a session's startup options.
 */
export function transactionSettings(url: string): Record<string, string> {
  return { ...SESSION_SETTINGS, ...urlSettings(url) };
}
