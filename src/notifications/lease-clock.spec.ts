import { LeaseClock } from './lease-clock';

// The service's own times (delivery-queue.ts): a heartbeat every 5 s, a 20 s lease, a gap
// past 7.5 s, the job locks every 10 minutes.
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const times = { leaseMs: 20 * SECOND, gapMs: 7.5 * SECOND, jobLocksEveryMs: 10 * MINUTE };

/** A clock whose heartbeats renewed the lease at each of `at` (ms). */
function renewedAt(...at: number[]): LeaseClock {
  const clock = new LeaseClock(times);
  for (const now of at) clock.renewed(now);
  return clock;
}

describe('LeaseClock', () => {
  it('lets a new instance unlock the jobs of others only after a whole lease of its own renewals', () => {
    const clock = new LeaseClock(times);
    expect(clock.mayUnlockOthers(0)).toBe(false);
    for (const now of [0, 5, 10, 15].map((s) => s * SECOND)) {
      clock.renewed(now);
      expect(clock.mayUnlockOthers(now)).toBe(false);
    }
    clock.renewed(20 * SECOND);
    expect(clock.mayUnlockOthers(20 * SECOND)).toBe(true);
  });

  it('starts the whole lease again after a gap between two renewals', () => {
    const clock = renewedAt(0, 5 * SECOND, 10 * SECOND, 15 * SECOND, 20 * SECOND);
    expect(clock.mayUnlockOthers(20 * SECOND)).toBe(true);
    // A renewal 7.6 s after the last one (a freeze of the network, failed heartbeats).
    clock.renewed(27.6 * SECOND);
    expect(clock.mayUnlockOthers(27.6 * SECOND)).toBe(false);
    for (const now of [32.6, 37.6, 42.6].map((s) => s * SECOND)) {
      clock.renewed(now);
      expect(clock.mayUnlockOthers(now)).toBe(false);
    }
    clock.renewed(47.6 * SECOND);
    expect(clock.mayUnlockOthers(47.6 * SECOND)).toBe(true);
  });

  it('takes a late heartbeat within the gap as no gap', () => {
    const clock = renewedAt(0, 7.5 * SECOND, 15 * SECOND, 20 * SECOND);
    expect(clock.mayUnlockOthers(20 * SECOND)).toBe(true);
  });

  it('lets the unlocking transaction begin within a gap of the renewal it was judged on', () => {
    expect(new LeaseClock(times).unlockBeganBy(100 * SECOND)).toBe(107.5 * SECOND);
  });

  it('renews the job locks at the first heartbeat, then once per period, a failed try counting as a try', () => {
    const clock = new LeaseClock(times);
    expect(clock.takeJobLocksRenewal(0)).toBe(true);
    // Every heartbeat of the next 10 minutes, whether the first try succeeded or failed.
    for (let now = 5 * SECOND; now < 10 * MINUTE; now += 5 * SECOND) {
      expect(clock.takeJobLocksRenewal(now)).toBe(false);
    }
    expect(clock.takeJobLocksRenewal(10 * MINUTE)).toBe(true);
    expect(clock.takeJobLocksRenewal(10 * MINUTE + 5 * SECOND)).toBe(false);
    // A heartbeat held up for longer than a period takes the renewal at its next beat.
    expect(clock.takeJobLocksRenewal(35 * MINUTE)).toBe(true);
  });
});
