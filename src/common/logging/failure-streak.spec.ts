import { FailureStreak } from './failure-streak';

describe('FailureStreak', () => {
  it('says when failing starts, then at most once per interval with the count, then when it recovers', () => {
    let now = 0;
    const streak = new FailureStreak('notification relay', 30_000, () => now);
    expect(streak.succeeded()).toBeNull();

    expect(streak.failed('connect ECONNREFUSED')).toBe('notification relay failed: connect ECONNREFUSED');
    const lines: (string | null)[] = [];
    // Ten failures a second for a minute.
    for (now = 100; now <= 60_000; now += 100) lines.push(streak.failed('connect ECONNREFUSED'));
    expect(lines.filter((line) => line !== null)).toEqual([
      'notification relay failed: connect ECONNREFUSED (301 attempts failed so far)',
      'notification relay failed: connect ECONNREFUSED (601 attempts failed so far)',
    ]);

    expect(streak.succeeded()).toBe('notification relay recovered after 601 failed attempts');
    expect(streak.succeeded()).toBeNull();
    // The next outage is told from its first failure again.
    expect(streak.failed('timeout')).toBe('notification relay failed: timeout');
  });
});
