import { AttemptOutcome, backoffMs, retryAfterMs, retryDecision } from '../src/retry.ts';

const NOW = Date.parse('2026-11-30T12:00:00Z');
const LOW = () => 0;
const HIGH = () => 0.999999;

function outcome(status: number | null, headers: Record<string, string> = {}, attempt = 1): AttemptOutcome {
  const error = status === 409 ? 'idempotency_in_progress' : null;
  return { attempt, status, failure: status === null ? 'connection' : null, headers, error };
}

/** The delay range a decision can take over every value of the jitter. */
function delays(o: AttemptOutcome, maxRetries = 3): { retry: boolean; min?: number; max?: number } {
  const low = retryDecision(o, maxRetries, LOW, NOW);
  const high = retryDecision(o, maxRetries, HIGH, NOW);
  if (!low.retry || !high.retry) return { retry: low.retry || high.retry };
  return { retry: true, min: low.delayMs, max: high.delayMs };
}

describe('the retry decision (a pure function of attempt, status, failure and headers)', () => {
  it.each<[string, AttemptOutcome, { retry: boolean; min?: number; max?: number }]>([
    ['a connection error', outcome(null), { retry: true, min: 0, max: 499 }],
    ['a timeout', { attempt: 1, status: null, failure: 'timeout', headers: {} }, { retry: true, min: 0, max: 499 }],
    ['409 idempotency_in_progress', outcome(409), { retry: true, min: 0, max: 499 }],
    ['a 409 with another code', { ...outcome(409), error: 'conflict' }, { retry: false }],
    ['429 with Retry-After: 2', outcome(429, { 'retry-after': '2' }), { retry: true, min: 2000, max: 2000 }],
    [
      '429 with Retry-After as a date 3 s ahead',
      outcome(429, { 'retry-after': new Date(NOW + 3000).toUTCString() }),
      { retry: true, min: 3000, max: 3000 },
    ],
    [
      '429 with Retry-After: 600 (capped)',
      outcome(429, { 'retry-after': '600' }),
      { retry: true, min: 8000, max: 8000 },
    ],
    [
      '429 with Retry-After: 0 (the jitter still applies)',
      outcome(429, { 'retry-after': '0' }),
      { retry: true, min: 0, max: 499 },
    ],
    ['429 with an unreadable Retry-After', outcome(429, { 'retry-after': 'soon' }), { retry: true, min: 0, max: 499 }],
    ['429 without Retry-After', outcome(429), { retry: true, min: 0, max: 499 }],
    ['500', outcome(500), { retry: true, min: 0, max: 499 }],
    ['502 from a proxy', outcome(502), { retry: true, min: 0, max: 499 }],
    ['503 with Retry-After: 1', outcome(503, { 'retry-after': '1' }), { retry: true, min: 1000, max: 1000 }],
    ['400', outcome(400), { retry: false }],
    ['401', outcome(401), { retry: false }],
    ['404', outcome(404), { retry: false }],
    ['413', outcome(413), { retry: false }],
    ['415', outcome(415), { retry: false }],
    ['a 3xx', outcome(302), { retry: false }],
    ['a 2xx (nothing to retry)', outcome(201), { retry: false }],
  ])('%s', (_name, input, expected) => {
    expect(delays(input)).toEqual(expected);
  });

  it.each([
    ['a connection error', null],
    ['409', 409],
    ['429', 429],
    ['503', 503],
  ])('stops retrying %s once maxRetries retries were made', (_name, status) => {
    expect(retryDecision(outcome(status, {}, 3), 3, LOW, NOW)).toMatchObject({ retry: true });
    expect(retryDecision(outcome(status, {}, 4), 3, LOW, NOW)).toEqual({ retry: false });
    expect(retryDecision(outcome(status, {}, 1), 0, LOW, NOW)).toEqual({ retry: false });
  });

  it('backs off exponentially from 0.5 s to 8 s, with full jitter', () => {
    const ceilings = [1, 2, 3, 4, 5, 6, 10].map((attempt) => backoffMs(attempt, HIGH) + 1);
    expect(ceilings).toEqual([500, 1000, 2000, 4000, 8000, 8000, 8000]);
    expect([1, 2, 5, 10].map((attempt) => backoffMs(attempt, LOW))).toEqual([0, 0, 0, 0]);
    expect(backoffMs(3, () => 0.5)).toBe(1000);
  });

  it('uses the jitter when it is longer than a short Retry-After', () => {
    expect(retryDecision(outcome(503, { 'retry-after': '1' }, 4), 5, HIGH, NOW)).toEqual({
      retry: true,
      delayMs: 3999,
    });
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(retryAfterMs('7', NOW)).toBe(7000);
    expect(retryAfterMs(' 7 ', NOW)).toBe(7000);
    expect(retryAfterMs(new Date(NOW - 5000).toUTCString(), NOW)).toBe(0);
    expect(retryAfterMs(undefined, NOW)).toBeNull();
    expect(retryAfterMs('-1', NOW)).toBeNull();
    expect(retryAfterMs('1.5', NOW)).toBeNull();
    expect(retryAfterMs('2026', NOW)).toBe(2026000);
  });
});
