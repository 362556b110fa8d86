/**
 * A counting semaphore with a wait limit and a reserve for tenants holding none. Per process, for load
 * shaping only: it decides how many connections may sit in writes (transactions, and
 * autocommit writes that may wait on a lock) at once, and how many of them one tenant may
 * hold, never whether anything happens.
 *
 * The reserve is what keeps hot rows from starving the others: requests queued on a row
 * lock hold their slots while they wait, so without a limit they could take them all.
 * The last `reserve` free slots are kept for tenants that hold none: one busy
 * tenant, or several together (a merchant's refunds and the provider's webhooks queued
 * on the same order), stop there, and every other tenant still finds a slot.
 */
export class Slots {
  private free: number;
  private readonly heldBy = new Map<string, number>();
  private readonly waiting: { tenant: string; grant: () => void; timer: NodeJS.Timeout }[] = [];

  /** `reserve`: the free slots kept for tenants that hold none. */
  constructor(
    private readonly size: number,
    private readonly reserve: number,
  ) {
    this.free = size;
  }

  /** The most slots one tenant can hold: all but the reserve. */
  get tenantShare(): number {
    return Math.max(1, this.size - this.reserve);
  }

  /** Resolves when a slot is `tenant`'s; rejects with `onTimeout()` after `timeoutMs`. */
  acquire(tenant: string, timeoutMs: number, onTimeout: () => Error): Promise<void> {
    // A waiter that could take a slot was granted one when it was released, so arriving
    // while others wait jumps no queue that could have moved.
    if (this.canTake(tenant)) {
      this.take(tenant);
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const entry = {
        tenant,
        grant: () => {
          clearTimeout(entry.timer);
          resolve();
        },
        timer: setTimeout(() => {
          this.waiting.splice(this.waiting.indexOf(entry), 1);
          reject(onTimeout());
        }, timeoutMs),
      };
      this.waiting.push(entry);
    });
  }

  release(tenant: string): void {
    const held = (this.heldBy.get(tenant) ?? 0) - 1;
    if (held > 0) this.heldBy.set(tenant, held);
    else this.heldBy.delete(tenant);
    this.free += 1;
    // One release can let two waiters in (a busy tenant now above the reserve, and the
    // releasing tenant's own waiter, which holds none any more): in arrival order, every
    // waiter that can take a slot now gets one.
    for (let next = this.nextGrantable(); next !== -1; next = this.nextGrantable()) {
      const [entry] = this.waiting.splice(next, 1);
      this.take(entry!.tenant);
      entry!.grant();
    }
  }

  private nextGrantable(): number {
    return this.waiting.findIndex((entry) => this.canTake(entry.tenant));
  }

  private held(tenant: string): number {
    return this.heldBy.get(tenant) ?? 0;
  }

  /**
   * Whether `tenant` would be granted a slot now, without waiting: a tenant's first slot
   * may be any free one, its next ones never the reserve.
   */
  canTake(tenant: string): boolean {
    return this.held(tenant) === 0 ? this.free > 0 : this.free > this.reserve;
  }

  private take(tenant: string): void {
    this.free -= 1;
    this.heldBy.set(tenant, this.held(tenant) + 1);
  }
}
