import { RepeatThrottle } from './repeat-throttle';

describe('RepeatThrottle', () => {
  it('lets a repeating line through once per period, then says how many it held back', () => {
    let now = 0;
    const throttle = new RepeatThrottle(30_000, () => now);
    const fetchFailed = (ms: number) => `Error occurred fetching jobs; trying again in ${ms}ms`;
    expect(throttle.line(fetchFailed(1000))).toBe(fetchFailed(1000));
    for (now = 1000; now < 30_000; now += 1000) expect(throttle.line(fetchFailed(now))).toBeNull();
    // Another line is its own.
    expect(throttle.line('worker stopped')).toBe('worker stopped');
    now = 30_000;
    expect(throttle.line(fetchFailed(2000))).toBe(`${fetchFailed(2000)} (and 29 like it in the 30 s before)`);
    // Long after the outage: said as new.
    now = 400_000;
    expect(throttle.line('worker stopped')).toBe('worker stopped');
    expect(throttle.line(fetchFailed(1000))).toBe(fetchFailed(1000));
  });
});
