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

/** How much longer than statement_timeout the client waits for a statement's answer. */
const CLIENT_TIMEOUT_MARGIN_MS = 5000;
/** After this long without traffic, the operating system probes the connection (TCP keepalive). */
export const KEEPALIVE_IDLE_MS = 10_000;

/**
 * How long pg waits for the answer to any one statement before failing it (503) and
 * ending its connection: the statement_timeout in force (ours, or the URL's own) plus a
 * margin, so that on a server that runs the statement PostgreSQL's own limit always acts
 * first. This one acts where PostgreSQL cannot: a server or pooler that stopped answering
 * (frozen, or cut off by the network while the connection still looks open), on which a
 * request holding a pooled connection would otherwise wait for ever. No limit when the
 * URL turns statement_timeout off (0): a statement may then run as long as it likes.
 */
export function clientStatementTimeoutMs(url: string): number | undefined {
  const setting = statementTimeoutInUrl(url) ?? SESSION_SETTINGS.statement_timeout;
  const ms = durationMs(setting);
  if (ms === 0) return undefined;
  return (ms ?? durationMs(SESSION_SETTINGS.statement_timeout)!) + CLIENT_TIMEOUT_MARGIN_MS;
}

function statementTimeoutInUrl(url: string): string | undefined {
  try {
    return urlSettings(url).statement_timeout;
  } catch {
    // Options that are not settings are passed on as written; PostgreSQL judges them.
    return undefined;
  }
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, min: 60_000, h: 3_600_000, d: 86_400_000 };

/** A PostgreSQL duration setting (milliseconds when it names no unit) in ms, or null if unreadable. */
function durationMs(value: string): number | null {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(us|ms|s|min|h|d)?\s*$/.exec(value);
  return match ? Math.ceil(Number(match[1]) * UNIT_MS[match[2] ?? 'ms']) : null;
}

/**
 * Every new connection listens for its 'error' events from its first moment. pg-pool
 * hands a new connection over as soon as it is ready; TypeORM listens on it a tick later.
 * A server that ends the connection at once (pg_terminate_backend, idle_session_timeout)
 * sends its FATAL in the same packet as the connection's readiness, and the event, with
 * nothing listening, ended the process. A query running on the connection still gets
 * the error, and a pooled or lent one is still dropped by pg-pool's and TypeORM's own
 * listeners.
 */
function listenForErrorsFromTheStart(client: { on(event: 'error', listener: () => void): unknown }): void {
  client.on('error', () => undefined);
}

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
      query_timeout: clientStatementTimeoutMs(url),
      // A peer gone without a word (a host down, a network cut) is noticed by the kernel's
      // probes, from 10 s of silence on, while the service would only wait for its answer.
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS,
      ...(options ? { options } : {}),
      ...(pool.pipeline ? { pipeline: true } : {}),
      onConnect: listenForErrorsFromTheStart,
      application_name: 'kukopay-api',
    },
  };
}

/** The sslmode values pg reads as verify-full, unless the URL asks for libpq's meanings (uselibpqcompat). */
const ALIASES_OF_VERIFY_FULL = ['require', 'verify-ca'];

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
  // pg reads sslmode=require and verify-ca as verify-full (README), and says so in a
  // ten-line SECURITY WARNING on every start: they are passed on as what they mean.
  const libpqMeanings = parsed.searchParams.get('uselibpqcompat') === 'true';
  if (!libpqMeanings && ALIASES_OF_VERIFY_FULL.includes(parsed.searchParams.get('sslmode') ?? '')) {
    parsed.searchParams.set('sslmode', 'verify-full');
  }
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
