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
    // The next outage, an interval later, is told from its first failure again.
    now += 30_000;
    expect(streak.failed('timeout')).toBe('notification relay failed: timeout');
  });
});

describe('FailureStreak when what it needs flaps', () => {
  it('writes at most a line per interval beyond a told outage, and counts the quiet ones in the next', () => {
    let now = 0;
    const streak = new FailureStreak('notification delivery: the database', 30_000, () => now);
    const lines: string[] = [];
    const say = (line: string | null) => line !== null && lines.push(`${now / 1000} s: ${line}`);
    // Away one second in two, for 75 s: one failure and one success a second.
    for (now = 0; now < 75_000; now += 1000) say(now % 2000 === 0 ? streak.failed('timeout') : streak.succeeded());
    expect(lines).toEqual([
      '0 s: notification delivery: the database failed: timeout',
      '1 s: notification delivery: the database recovered after 1 failed attempt',
      '31 s: notification delivery: the database recovered; 15 failed attempts in 15 short outages since the last line',
      '61 s: notification delivery: the database recovered; 15 failed attempts in 15 short outages since the last line',
    ]);
    // A long outage after quiet ones counts them in its first line.
    now = 75_000;
    say(streak.succeeded());
    now = 91_000;
    say(streak.failed('timeout'));
    now = 92_000;
    say(streak.failed('timeout'));
    say(streak.succeeded());
    expect(lines.slice(4)).toEqual([
      '91 s: notification delivery: the database failed: timeout; before it, 7 failed attempts in 7 short outages',
      '92 s: notification delivery: the database recovered after 2 failed attempts',
    ]);
    // A short outage soon after, then only successes: said once the interval has passed.
    now = 93_000;
    say(streak.failed('timeout'));
    say(streak.succeeded());
    now = 110_000;
    say(streak.succeeded());
    now = 123_000;
    say(streak.succeeded());
    say(streak.succeeded());
    expect(lines.slice(6)).toEqual([
      '123 s: notification delivery: the database recovered; 1 failed attempt in a short outage since the last line',
    ]);
  });
});
