/**
 * Settings of merchant notifications (docs/notifications.md), validated at boot like the
 * rest of the configuration: a bad value stops the process naming the variable.
 */
import { ConfigError, Env, integer, onOff, strictBase64, value } from './env-values';

export interface NotificationConfig {
  /** false with NOTIFY_WORKERS=off: this instance records and enqueues but never delivers. */
  workers: boolean;
  concurrency: number;
  /** Delays in ms from the first attempt's due time, one attempt per slot. */
  retrySchedule: readonly number[];
  timeoutMs: number;
  allowPrivateNetworks: boolean;
  /** AES-256-GCM key for notification secrets at rest; null stores them as they are. */
  encryptionKey: Buffer | null;
}

export const DEFAULT_RETRY_SCHEDULE = '0,5s,5m,30m,2h,5h,10h,10h';

export function loadNotificationConfig(env: Env): NotificationConfig {
  return {
    workers: onOff(env, 'NOTIFY_WORKERS', true),
    concurrency: integer(env, 'NOTIFY_WORKER_CONCURRENCY', 10, 1, 100),
    retrySchedule: parseRetrySchedule(value(env, 'NOTIFY_RETRY_SCHEDULE') ?? DEFAULT_RETRY_SCHEDULE),
    timeoutMs: integer(env, 'NOTIFY_TIMEOUT_MS', 10000, 100, 120000),
    allowPrivateNetworks: onOff(env, 'NOTIFY_ALLOW_PRIVATE_NETWORKS', false),
    encryptionKey: encryptionKey(env),
  };
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `0,5s,5m,30m,2h`: each entry a whole number with ms, s, m or h (bare: seconds), never decreasing. */
export function parseRetrySchedule(raw: string): number[] {
  const slots = raw.split(',').map((entry) => {
    const match = /^(\d+)(ms|s|m|h)?$/.exec(entry.trim());
    if (!match) {
      throw new ConfigError('NOTIFY_RETRY_SCHEDULE', `must be delays such as 0,5s,5m,2h (got "${entry.trim()}")`);
    }
    return Number(match[1]) * UNITS[match[2] ?? 's'];
  });
  if (slots.length > 50) throw new ConfigError('NOTIFY_RETRY_SCHEDULE', 'must have at most 50 slots');
  for (let i = 1; i < slots.length; i++) {
    if (slots[i] < slots[i - 1]) {
      throw new ConfigError('NOTIFY_RETRY_SCHEDULE', 'delays count from the first attempt and must not decrease');
    }
  }
  return slots;
}

function encryptionKey(env: Env): Buffer | null {
  const raw = value(env, 'ENCRYPTION_KEY');
  if (raw === undefined) return null;
  const key = strictBase64(raw);
  if (key?.length !== 32) {
    throw new ConfigError('ENCRYPTION_KEY', 'must be 32 random bytes in base64 (openssl rand -base64 32)');
  }
  return key;
}
