/**
 * What a heartbeat may do, judged by when this instance renewed its own lease
 * (docs/notifications.md, "Engine"). Times are read on the monotonic clock
 * (performance.now()) by the caller and passed in: a wall clock stepped back (NTP, a
 * virtual machine resumed) would hide a gap, and a clock passed in is one a test can move.
 */
export interface LeaseTimes {
  /** A worker silent for this long is dead; the jobs it holds are unlocked. */
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
   * Since when the lease has been renewed without a gap. An instance unlocks other pools'
   * jobs only after a whole lease of its own renewals: after an outage, or a freeze of the
   * network, every live instance's lease may be as old as it, and the first instance to
   * get through would take the attempts the others still have in flight. A new instance
   * too counts from its first renewal: it may have started as an outage ended (waiting for
   * the database at start-up, or restarted by an orchestrator), before the live instances'
   * next heartbeat.
   */
  private renewingSince = Infinity;
  /** When the lease was last renewed: never yet. */
  private renewedAt = -Infinity;
  /** When the job locks' renewal was last tried: never, so the first heartbeat runs it. */
  private jobLocksTriedAt = -Infinity;

  constructor(private readonly times: LeaseTimes) {}

  /** The lease was renewed at `now`. */
  renewed(now: number): void {
    if (now - this.renewedAt > this.times.gapMs) this.renewingSince = now;
    this.renewedAt = now;
  }

  /** Whether the lease has been renewed for a whole lease without a gap, as of `now`. */
  mayUnlockOthers(now: number): boolean {
    return now - this.renewingSince >= this.times.leaseMs;
  }

  /**
   * The latest moment at which the unlocking transaction, judged on `renewedAt`, may begin:
   * one that began later may have begun after an outage that renewal did not see.
   */
  unlockBeganBy(renewedAt: number): number {
    return renewedAt + this.times.gapMs;
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
