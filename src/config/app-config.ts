/**
 * The environment, validated once at boot into a typed, frozen object. A bad value stops
 * the process with a message that names the variable (ConfigError), never a late crash.
 */
import { CronTime } from 'cron';
import { loadNotificationConfig, NotificationConfig } from './notification-config';
import { parseWebhookSecrets, WebhookSecrets } from './webhook-secrets';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface AppConfig {
  port: number;
  /** Unset: the embedded PostgreSQL is started. */
  databaseUrl: string | null;
  /** Unset: the admin API answers 404. */
  adminToken: string | null;
  /** Empty: the webhook route answers 503 webhooks_not_configured. */
  webhookSecrets: WebhookSecrets;
  idempotencyTtlSeconds: number;
  /** null when switched off with IDEMPOTENCY_PURGE_CRON=off. */
  idempotencyPurgeCron: string | null;
  logLevel: LogLevel;
  notifications: NotificationConfig;
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    detail: string,
  ) {
    super(`Invalid configuration: ${variable} ${detail}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

export function loadConfig(env: Env = process.env): AppConfig {
  return Object.freeze({
    port: integer(env, 'PORT', 3000, 0, 65535),
    databaseUrl: databaseUrl(env),
    adminToken: adminToken(env),
    webhookSecrets: webhookSecrets(env),
    idempotencyTtlSeconds: integer(env, 'IDEMPOTENCY_TTL_SECONDS', 86400, 1, 365 * 86400),
    idempotencyPurgeCron: purgeCron(env),
    logLevel: logLevel(env),
    notifications: loadNotificationConfig(env),
  });
}

function value(env: Env, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw.trim() === '' ? undefined : raw.trim();
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = value(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(name, `must be a whole number from ${min} to ${max} (got "${raw}")`);
  }
  return Number(raw);
}

function databaseUrl(env: Env): string | null {
  const raw = value(env, 'DATABASE_URL');
  if (raw === undefined) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('DATABASE_URL', 'must be a URL such as postgres://user@host:5432/db');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new ConfigError('DATABASE_URL', `must start with postgres:// (got ${url.protocol}//)`);
  }
  return raw;
}

function adminToken(env: Env): string | null {
  const raw = value(env, 'ADMIN_TOKEN');
  if (raw === undefined) return null;
  if (raw.length < 16 || !/^[\x21-\x7e]+$/.test(raw)) {
    throw new ConfigError('ADMIN_TOKEN', 'must be at least 16 printable characters without spaces');
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
  try {
    new CronTime(raw);
  } catch (error) {
    throw new ConfigError('IDEMPOTENCY_PURGE_CRON', `must be a cron expression or "off" (${(error as Error).message})`);
  }
  return raw;
}

function logLevel(env: Env): LogLevel {
  const raw = value(env, 'LOG_LEVEL') ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(raw)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')} (got "${raw}")`);
  }
  return raw as LogLevel;
}
