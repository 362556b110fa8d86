/**
 * Settings of merchant notifications (docs/notifications.md), validated at boot like the
 * rest of the configuration: a bad value stops the process naming the variable.
 */
import { ConfigError, Env, integer, onOff, strictBase64, value } from './env-values';

export interface NotificationConfig {
  /** false with NOTIFY_WORKERS=off: this instance records and enqueues but never delivers. */
  workers: boolean;
  concurrency: number;
  /**
   * Each attempt's due time in ms after the event's commit, one attempt per slot: the
   * running sums of NOTIFY_RETRY_SCHEDULE's delays, so it never decreases.
   */
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

/** An event is kept while it may still be attempted; a schedule past a month is a typo. */
const MAX_SCHEDULE_MS = 30 * 24 * 3_600_000;

/**
 * `0,5s,5m,30m,2h`: each entry a whole number with ms, s, m or h (bare: seconds), the delay
 * of an attempt after the one before it, counted from that one's due time rather than from
 * when it failed, so a slow receiver does not push the schedule back. Returned as each
 * attempt's due time after the commit: the default's delays add up to about 28 hours, as
 * the contract says (docs/notifications.md, "Schedule").
 */
export function parseRetrySchedule(raw: string): number[] {
  const delays = raw.split(',').map((entry) => {
    const match = /^(\d+)(ms|s|m|h)?$/.exec(entry.trim());
    if (!match) {
      throw new ConfigError('NOTIFY_RETRY_SCHEDULE', `must be delays such as 0,5s,5m,2h (got "${entry.trim()}")`);
    }
    return Number(match[1]) * UNITS[match[2] ?? 's'];
  });
  if (delays.length > 50) throw new ConfigError('NOTIFY_RETRY_SCHEDULE', 'must have at most 50 slots');
  let due = 0;
  const slots = delays.map((delay) => (due += delay));
  if (due > MAX_SCHEDULE_MS) {
    throw new ConfigError(
      'NOTIFY_RETRY_SCHEDULE',
      `must add up to at most 30 days (got ${Math.round(due / 3_600_000)} hours)`,
    );
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
