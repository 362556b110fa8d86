import { LeaseClock } from './lease-clock';

// The service's own times (delivery-queue.ts): a heartbeat every 5 s, a 20 s lease, a gap
// past 7.5 s, the job locks every 10 minutes.
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const times = { leaseMs: 20 * SECOND, gapMs: 7.5 * SECOND, jobLocksEveryMs: 10 * MINUTE };

/** Renews a new clock's lease at each of `at` (seconds); what the last renewal allows. */
function renewedAt(...at: number[]): number | null {
  const clock = new LeaseClock(times);
  let unlockBeganBy: number | null = null;
  for (const seconds of at) unlockBeganBy = clock.renewed(seconds * SECOND);
  return unlockBeganBy;
}

describe('LeaseClock', () => {
  it('lets a new instance unlock the jobs of others only after a whole lease of its own renewals', () => {
    expect(renewedAt(0)).toBeNull();
    expect(renewedAt(0, 5, 10, 15)).toBeNull();
    // …then within a gap of that renewal: a BEGIN answered later does nothing.
    expect(renewedAt(0, 5, 10, 15, 20)).toBe(27.5 * SECOND);
  });

  it('starts the whole lease again after a gap between two renewals', () => {
    // A renewal 7.6 s after the last one (a freeze of the network, failed heartbeats).
    expect(renewedAt(0, 5, 10, 15, 20, 27.6)).toBeNull();
    expect(renewedAt(0, 5, 10, 15, 20, 27.6, 32.6, 37.6, 42.6)).toBeNull();
    expect(renewedAt(0, 5, 10, 15, 20, 27.6, 32.6, 37.6, 42.6, 47.6)).toBe(55.1 * SECOND);
  });

  it('takes a late heartbeat within the gap as no gap', () => {
    expect(renewedAt(0, 7.5, 15, 20)).toBe(27.5 * SECOND);
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
