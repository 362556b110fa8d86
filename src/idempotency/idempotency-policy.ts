/**
 * The two decisions of the Idempotency-Key layer that depend on nothing but their inputs,
 * kept pure so that a table test pins them down (idempotency-policy.spec.ts).
 */

/**
 * Whether an answer the handler produced is stored under the key (docs/idempotency.md):
 * every 2xx and every 4xx the request itself caused. A 5xx is not (the key is released
 * and a retry really executes), nor a serialization failure (the transaction is retried).
 */
export function shouldStore(status: number, serializationFailure: boolean): boolean {
  return !serializationFailure && status < 500;
}

/** Base of the pause before retrying a transaction aborted by a deadlock or serialization failure. */
const RETRY_BASE_MS = 10;

/**
 * The pause before retry number `attempt` (1, 2 …): full jitter over an exponential window
 * (10 ms, then 20 ms …), so competitors that just collided spread out instead of meeting again.
 */
export function retryPause(attempt: number, random: () => number = Math.random): number {
  return Math.floor(random() * RETRY_BASE_MS * 2 ** (attempt - 1));
}
