/**
 * What a heartbeat may do, judged by when this instance renewed its own lease
 * (docs/notifications.md, "Engine"). Times are read on the monotonic clock
 * (performance.now()) by the caller and passed in: a wall clock stepped back (NTP, a
 * virtual machine resumed) would hide a gap, and a clock passed in is one a test can move.
 */
export interface LeaseTimes {
  /** How long a lease lasts (delivery-queue.ts): what an instance renews for before it unlocks others' jobs. */
  leaseMs: number;
  /**
   * Longer than this between two renewals is a gap (renewals that failed, or one that hung
   * while the network or the server was frozen).
   */
  gapMs: number;
  /** How often the lock times of the jobs held are renewed (NotificationWorkersRepository.renewJobLocks). */
  jobLocksEveryMs: number;
}

export class LeaseClock {
  /**
   * Since when the lease has been renewed without a gap: set by the first renewal. An
   * instance unlocks other pools' jobs only after a whole lease of its own renewals: after
   * an outage, or a freeze of the network, every live instance's lease may be as old as
   * it, and the first instance to get through would take the attempts the others still
   * have in flight.
   */
  private renewingSince = 0;
  /**
   * When the lease was last renewed: never yet, so the first renewal counts as one after a
   * gap. A new instance too waits a whole lease: it may have started as an outage ended
   * (waiting for the database at start-up, or restarted by an orchestrator), before the
   * live instances' next heartbeat.
   */
  private renewedAt = -Infinity;
  /** When the job locks' renewal was last tried: never, so the first heartbeat runs it. */
  private jobLocksTriedAt = -Infinity;

  constructor(private readonly times: LeaseTimes) {}

  /**
   * The lease was renewed at `now`. Returns the moment (same clock) by which a transaction
   * that unlocks the jobs of silent pools must have begun, or null while this instance may
   * not unlock them yet: it has not renewed its own for a whole lease without a gap. One
   * that began later may have begun after an outage this renewal did not see.
   */
  renewed(now: number): number | null {
    if (now - this.renewedAt > this.times.gapMs) this.renewingSince = now;
    this.renewedAt = now;
    return now - this.renewingSince >= this.times.leaseMs ? now + this.times.gapMs : null;
  }

  /**
   * Whether the job locks' renewal is due at `now`, counting it as tried: one that fails (a
   * scan past the heartbeat's limit on a huge queue) is tried again at the next period,
   * not with every heartbeat.
   */
  takeJobLocksRenewal(now: number): boolean {
    if (now - this.jobLocksTriedAt < this.times.jobLocksEveryMs) return false;
    this.jobLocksTriedAt = now;
    return true;
  }
}
