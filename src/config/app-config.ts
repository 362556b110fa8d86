/**
 * The environment, validated once at boot into a typed, frozen object. A bad value stops
 * the process with a message that names the variable (ConfigError), never a late crash.
 */
import { isIP } from 'node:net';
import { CronTime } from 'cron';
import { urlSettings } from './url-settings';
import { ConfigError, Env, integer, onOff, value } from './env-values';
import { loadNotificationConfig, NotificationConfig } from './notification-config';
import { parseWebhookSecrets, WebhookSecrets } from './webhook-secrets';

/** Thrown for a bad value; named here too, where the configuration is loaded. */
export { ConfigError };

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const POOL_MODES = ['session', 'transaction'] as const;
/** `transaction`: behind a transaction-pooling pooler such as PgBouncer (docs/operations.md). */
export type PoolMode = (typeof POOL_MODES)[number];
export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export interface AppConfig {
  port: number;
  /** The address to listen on; 0.0.0.0 is every IPv4 interface. */
  host: string;
  /** Unset: the embedded PostgreSQL is started. */
  databaseUrl: string | null;
  /** A direct server connection for what needs a session (migrations, LISTEN); unset: databaseUrl. */
  databaseDirectUrl: string | null;
  databasePoolMode: PoolMode;
  /**
   * Behind a transaction pooler that keeps protocol-level prepared statements (PgBouncer
   * 1.21 and later with max_prepared_statements above 0): statements are prepared there too.
   */
  databasePoolPreparedStatements: boolean;
  /**
   * Behind a transaction pooler: the role (or database) already sets the limits on every
   * server connection (ALTER ROLE … SET), so they are not sent with each transaction.
   */
  databasePoolRoleSettings: boolean;
  /** Connections per process. */
  databasePoolSize: number;
  /** How long a start-up waits for a database that cannot serve yet (0: one try). */
  databaseStartTimeoutMs: number;
  /** The whole request (headers and body) must arrive within this; headers within 10 s. */
  requestTimeoutMs: number;
  /** SIGTERM drains in-flight requests for at most this long, then the process exits. */
  shutdownTimeoutMs: number;
  /** Unset: the admin API answers 404. */
  adminToken: string | null;
  /** Empty: the webhook route answers 503 webhooks_not_configured. */
  webhookSecrets: WebhookSecrets;
  idempotencyTtlSeconds: number;
  /** null when switched off with IDEMPOTENCY_PURGE_CRON=off. */
  idempotencyPurgeCron: string | null;
  logLevel: LogLevel;
  logFormat: LogFormat;
  /** Set: GET /metrics asks for it as a bearer token. */
  metricsToken: string | null;
  notifications: NotificationConfig;
}

/** `stdoutIsTty`: whether a person is likely reading the logs (pretty by default under npm start). */
export function loadConfig(env: Env = process.env, stdoutIsTty = process.stdout.isTTY === true): AppConfig {
  const config = readConfig(env, stdoutIsTty);
  if (config.databasePoolMode === 'transaction' && config.databaseDirectUrl === null) {
    // Behind a transaction pooler there is no session for migrations or the queue's LISTEN.
    throw new ConfigError('DATABASE_DIRECT_URL', 'must be set when DATABASE_POOL_MODE=transaction');
  }
  if (config.databasePoolPreparedStatements && config.databasePoolMode !== 'transaction') {
    // Without a pooler in between, statements are always prepared; saying so is a mistake.
    throw new ConfigError('DATABASE_POOL_PREPARED_STATEMENTS', 'applies only with DATABASE_POOL_MODE=transaction');
  }
  if (config.databasePoolRoleSettings && config.databasePoolMode !== 'transaction') {
    // Without a transaction pooler the limits are startup options, which win over the role's.
    throw new ConfigError('DATABASE_POOL_ROLE_SETTINGS', 'applies only with DATABASE_POOL_MODE=transaction');
  }
  if (config.databasePoolMode === 'transaction' && config.databaseUrl !== null) {
    // Applied with every statement behind the pooler, so they must be settings (url-settings.ts).
    try {
      urlSettings(config.databaseUrl);
    } catch (error) {
      throw new ConfigError('DATABASE_URL', (error as Error).message);
    }
  }
  return config;
}

function readConfig(env: Env, stdoutIsTty: boolean): AppConfig {
  pgSslMode(env);
  return Object.freeze({
    port: integer(env, 'PORT', 3000, 0, 65535),
    host: host(env),
    databaseUrl: databaseUrl(env, 'DATABASE_URL'),
    databaseDirectUrl: databaseUrl(env, 'DATABASE_DIRECT_URL'),
    databasePoolMode: oneOf(env, 'DATABASE_POOL_MODE', POOL_MODES, 'session'),
    databasePoolPreparedStatements: onOff(env, 'DATABASE_POOL_PREPARED_STATEMENTS', false),
    databasePoolRoleSettings: onOff(env, 'DATABASE_POOL_ROLE_SETTINGS', false),
    databasePoolSize: integer(env, 'DATABASE_POOL_SIZE', 20, 2, 1000),
    databaseStartTimeoutMs: integer(env, 'DATABASE_START_TIMEOUT_MS', 30_000, 0, 3_600_000),
    requestTimeoutMs: integer(env, 'REQUEST_TIMEOUT_MS', 30_000, 1000, 3_600_000),
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 25_000, 1000, 3_600_000),
    adminToken: adminToken(env),
    webhookSecrets: webhookSecrets(env),
    idempotencyTtlSeconds: integer(env, 'IDEMPOTENCY_TTL_SECONDS', 86400, 1, 365 * 86400),
    idempotencyPurgeCron: purgeCron(env),
    logLevel: logLevel(env),
    logFormat: logFormat(env, stdoutIsTty),
    metricsToken: bearerToken(env, 'METRICS_TOKEN'),
    notifications: loadNotificationConfig(env),
  });
}

function databaseUrl(env: Env, name: string): string | null {
  const raw = value(env, name);
  if (raw === undefined) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, 'must be a URL such as postgres://user@host:5432/db');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new ConfigError(name, `must start with postgres:// (got ${url.protocol}//)`);
  }
  // pg decodes these when it connects, and would fail then, on every attempt ("URI malformed").
  for (const [part, text] of [
    ['user name', url.username],
    ['password', url.password],
    ['database name', url.pathname],
  ]) {
    if (!isDecodable(text)) {
      throw new ConfigError(name, `has a ${part} with a malformed percent-encoding: write a literal % as %25`);
    }
  }
  // The checks below read a parameter's first value, pg its last (`?sslmode=verify-full&sslmode=disable`
  // would pass as verify-full and connect in the clear): one of each, or none.
  const names = [...url.searchParams.keys()];
  const twice = names.find((each, i) => names.indexOf(each) !== i);
  if (twice !== undefined) throw new ConfigError(name, `names the parameter ${twice} more than once`);
  // pg reads a value it does not know (a typo, libpq's `allow`) as TLS with full
  // verification, not as the mode meant: refused here instead of surprising at connection.
  // So is `prefer`, which pg never lets fall back to a plain connection as libpq does.
  const sslmode = url.searchParams.get('sslmode');
  if (sslmode !== null) checkSslMode(name, true, sslmode);
  return raw;
}

/**
 * PGSSLMODE, which the pg driver reads where DATABASE_URL names no sslmode, is held to
 * the same rule: `prefer` would connect with TLS verified and no fallback, a typo in
 * the clear.
 */
function pgSslMode(env: Env): void {
  const mode = value(env, 'PGSSLMODE');
  const urls = [value(env, 'DATABASE_URL'), value(env, 'DATABASE_DIRECT_URL')].filter((url) => url !== undefined);
  // Where every URL names its own sslmode pg never reads it (a value kept for psql, say).
  const read = urls.length === 0 || urls.some((url) => !/[?&]sslmode=/.test(url));
  if (mode !== undefined && read) checkSslMode('PGSSLMODE', false, mode);
}

/** `inUrl`: the mode is a URL's sslmode parameter, not a variable of its own. */
function checkSslMode(variable: string, inUrl: boolean, mode: string): void {
  const noFallback =
    'the pg driver reads as verify-full, without falling back to a plain connection: ' +
    'use disable, or require / verify-full for TLS (docs/operations.md)';
  if (mode === 'prefer') {
    throw new ConfigError(
      variable,
      inUrl ? `has sslmode=prefer, which ${noFallback}` : `is prefer, which ${noFallback}`,
    );
  }
  if (!SSL_MODES.includes(mode)) {
    const rule = `must be one of ${SSL_MODES.join(', ')} (got "${mode}")`;
    throw new ConfigError(variable, inUrl ? `sslmode ${rule}` : rule);
  }
}

function isDecodable(text: string): boolean {
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * The sslmode values the pg driver implements: disable; require, verify-ca and
 * verify-full, which it reads alike (TLS, the certificate and host checked); no-verify,
 * its own (TLS without checks).
 */
const SSL_MODES: readonly string[] = ['disable', 'require', 'verify-ca', 'verify-full', 'no-verify'];

/** One of a few lower-case words; `INFO` means `info`, as `OFF` means `off` for on/off switches. */
function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const typed = value(env, name);
  const word = typed?.toLowerCase() ?? fallback;
  if (!(allowed as readonly string[]).includes(word)) {
    throw new ConfigError(name, `must be one of ${allowed.join(', ')} (got "${typed}")`);
  }
  return word as T;
}

function adminToken(env: Env): string | null {
  return bearerToken(env, 'ADMIN_TOKEN');
}

function bearerToken(env: Env, name: string): string | null {
  const raw = value(env, name);
  if (raw === undefined) return null;
  if (raw.length < 16 || !/^[\x21-\x7e]+$/.test(raw)) {
    throw new ConfigError(name, 'must be at least 16 printable characters without spaces');
  }
  return raw;
}

function webhookSecrets(env: Env): WebhookSecrets {
  try {
    return parseWebhookSecrets(value(env, 'WEBHOOK_SECRETS'));
  } catch (error) {
    throw new ConfigError('WEBHOOK_SECRETS', (error as Error).message);
  }
}

function purgeCron(env: Env): string | null {
  const raw = value(env, 'IDEMPOTENCY_PURGE_CRON') ?? '*/10 * * * *';
  if (raw.toLowerCase() === 'off') return null;
  let schedule: CronTime;
  try {
    schedule = new CronTime(raw);
  } catch (error) {
    throw new ConfigError('IDEMPOTENCY_PURGE_CRON', `must be a cron expression or "off" (${(error as Error).message})`);
  }
  // A date no year has (`0 0 31 2 *`) parses, and fails only when the job is started, late
  // in the start-up and in the cron library's words.
  try {
    schedule.sendAt();
  } catch {
    throw new ConfigError(
      'IDEMPOTENCY_PURGE_CRON',
      `names no time that ever comes (got "${raw}"); use "off" to purge never`,
    );
  }
  return raw;
}

function host(env: Env): string {
  const raw = value(env, 'HOST') ?? '0.0.0.0';
  // An IP address or a host name; anything else would only fail later, at listen().
  // Digits and dots only is meant as an IPv4 address (`999.1.1.1` would otherwise be looked
  // up as a name, and fail only when the server listens).
  const malformedAddress = /^[0-9.]+$/.test(raw) && isIP(raw) === 0;
  if (!/^[A-Za-z0-9.:-]{1,253}$/.test(raw) || malformedAddress) {
    throw new ConfigError('HOST', `must be an IP address or host name such as 0.0.0.0 or 127.0.0.1 (got "${raw}")`);
  }
  return raw;
}

/** JSON unless asked otherwise, or unless `npm start` writes to a terminal. */
function logFormat(env: Env, stdoutIsTty: boolean): LogFormat {
  const fallback = stdoutIsTty && env.npm_lifecycle_event === 'start' ? 'pretty' : 'json';
  return oneOf(env, 'LOG_FORMAT', LOG_FORMATS, fallback);
}

function logLevel(env: Env): LogLevel {
  return oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info');
}
