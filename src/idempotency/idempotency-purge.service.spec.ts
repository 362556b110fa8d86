import { describePurge, PurgeResult } from './idempotency-purge.service';

const result = (overrides: Partial<PurgeResult>): PurgeResult => ({
  deleted: 0,
  batches: 1,
  durationMs: 0,
  skipped: false,
  finished: true,
  ...overrides,
});

describe('describePurge', () => {
  it('says how many keys went and how long it took, in tenths of a second', () => {
    expect(describePurge(result({ deleted: 1234, durationMs: 812 }))).toBe(
      'Purged 1234 expired idempotency keys in 0.8 s',
    );
    expect(describePurge(result({ deleted: 1, durationMs: 40 }))).toBe('Purged 1 expired idempotency key in 0.0 s');
  });

  it('says when a run stopped before the end', () => {
    expect(describePurge(result({ deleted: 5000, durationMs: 60_000, finished: false }))).toBe(
      'Purged 5000 expired idempotency keys in 60.0 s; stopped early, the rest is left for the next run',
    );
  });

  it('says when another instance was purging', () => {
    expect(describePurge(result({ skipped: true, batches: 0, finished: false }))).toMatch(
      /^Skipped .*another instance/,
    );
  });
});
