/**
 * When to retry, and how long to wait: pure functions of one attempt's outcome, so that
 * the whole policy is a table in the tests. Retrying is safe because every POST carries
 * the same Idempotency-Key and the same body bytes on every attempt: the server either
 * runs the request once or replays its stored answer.
 */

/** First backoff ceiling and the largest wait between two attempts. */
export const BASE_DELAY_MS = 500;
export const MAX_DELAY_MS = 8000;

/** Why an attempt got no answer. */
export type AttemptFailure = 'connection' | 'timeout';

export interface AttemptOutcome {
  /** Attempts made so far for this call, the one just finished included (1 for the first). */
  attempt: number;
  /** Status of the answer, or null when no answer came. */
  status: number | null;
  /** Why no answer came; null when one did. */
  failure: AttemptFailure | null;
  /** The answer's headers, names in lower case (empty when no answer came). */
  headers: Readonly<Record<string, string>>;
  /** The answer's `error` code, when it had the error envelope. */
  error?: string | null;
}

export type RetryDecision = { retry: false } | { retry: true; delayMs: number };

/**
 * Retries connection errors, timeouts, 409 `idempotency_in_progress` (the same key still
 * in progress), 429 and 5xx, while `attempt <= maxRetries`. Never another 4xx: the server stored that answer
 * under the key, and a retry would only replay it.
 */
export function retryDecision(
  outcome: AttemptOutcome,
  maxRetries: number,
  random: () => number = Math.random,
  now: number = Date.now(),
): RetryDecision {
  if (outcome.attempt > maxRetries) return { retry: false };
  if (!isRetryable(outcome)) return { retry: false };
  const backoff = backoffMs(outcome.attempt, random);
  const retryAfter = outcome.status === null ? null : retryAfterMs(outcome.headers['retry-after'], now);
  // The server's Retry-After is a floor (capped), and the jitter still spreads clients out.
  const delayMs = retryAfter === null ? backoff : Math.min(MAX_DELAY_MS, Math.max(retryAfter, backoff));
  return { retry: true, delayMs };
}

function isRetryable({ status, failure, error }: AttemptOutcome): boolean {
  if (status === null) return failure !== null;
  if (status === 409) return error === 'idempotency_in_progress';
  return status === 429 || status >= 500;
}

/** Exponential backoff with full jitter: uniform in [0, min(8 s, 0.5 s × 2^(attempt-1))). */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** Math.max(0, attempt - 1));
  return Math.floor(random() * ceiling);
}

/** `Retry-After` as delay-seconds or an HTTP date, in milliseconds; null when absent or invalid. */
export function retryAfterMs(value: string | undefined, now: number = Date.now()): number | null {
  if (value === undefined) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  if (Number.isNaN(date) || !/[a-z]/i.test(text)) return null;
  return Math.max(0, date - now);
}
