import { setTimeout as sleep } from 'node:timers/promises';
import { literal } from './literal';
import { DatabaseBusyError, isSharedSlotTaken } from './pg-errors';

/** What a transaction's caller and its Db hear while it waits for a slot. */
export interface SlotWaitHooks {
  /**
   * Called before each wait for a slot (Db's asks its caller only the first time): the
   * caller may throw instead of waiting (a twin of an Idempotency-Key in flight answers 409
   * at once).
   */
  beforeWaiting(): Promise<void>;
  /** +1 when a wait begins, -1 when it ends: the pool's `waiting` gauge. */
  waiting(delta: 1 | -1): void;
}

/**
 * The provider's events about one order are applied one at a time anyway (each locks the
 * order's row): two transactions across all instances are all they can use.
 */
const ORDER_SLOTS = 2;
/** After a refusal, the tenant's next transactions send their claim on its own for this long. */
const REFUSED_RECENTLY_MS = 1000;

/**
 * A tenant's write slots across every instance, behind a transaction pooler. There the
 * instances lend the same server connections, and a write waiting on a lock pins one, so
 * the per-process share (Slots) no longer bounds what one tenant holds: two instances
 * could let it pin twice its share of the pooler's pool. So each of its transactions also
 * takes one of its tenant's transaction-level advisory locks (the function
 * kuko_take_write_slot, sent with BEGIN), which only the database can count across
 * instances (docs/decisions.md, "Write slots, shared out by tenant").
 *
 * Only the tenants whose writes queue on a merchant's rows, from outside and so from
 * every instance at once: a merchant's own requests (its id: `perMerchant` slots) and the
 * provider's events about one order (`order:<id>`: ORDER_SLOTS). The service's own work
 * (notifications, the purge, the admin API, events naming no order) is bounded per
 * instance by its own settings.
 */
export class SharedSlots {
  /** When each tenant was last refused (REFUSED_RECENTLY_MS): cleared by its next success, or by later refusals. */
  private readonly refusedAt = new Map<string, number>();

  /** `perMerchant` 0: none taken (session pooling, where each instance's connections are its own). */
  constructor(private readonly perMerchant: number) {}

  private slotsOf(tenant: string): number {
    if (this.perMerchant === 0) return 0;
    if (tenant.startsWith('mch_')) return this.perMerchant;
    if (tenant.startsWith('order:')) return Math.min(ORDER_SLOTS, this.perMerchant);
    return 0;
  }

  /** Notes a refusal; refusals past REFUSED_RECENTLY_MS are forgotten, so the map stays small. */
  private refused(tenant: string): void {
    const now = Date.now();
    for (const [other, at] of this.refusedAt) if (now - at >= REFUSED_RECENTLY_MS) this.refusedAt.delete(other);
    this.refusedAt.set(tenant, now);
  }

  /** The statement to send with BEGIN that takes one of the tenant's slots, if it takes any. */
  claim(tenant: string): string[] {
    const slots = this.slotsOf(tenant);
    return slots === 0 ? [] : [`SELECT kuko_take_write_slot(${literal(tenant)}, ${slots})`];
  }

  /**
   * Runs a transaction (`start`) until it gets one of its tenant's slots. A refusal
   * (SQLSTATE KUW01) comes before anything else of the transaction ran, and its connection
   * goes back to the pool while it waits, so that other tenants' requests have it. The
   * waits grow from 25 to 250 ms, with jitter, until `deadline`, then 503. `start` is told
   * whether the tenant was refused just before, so that it can send its claim on its own (Db).
   */
  async run<T>(
    tenant: string,
    deadline: number,
    hooks: SlotWaitHooks,
    start: (refusedRecently: boolean) => Promise<T>,
  ): Promise<T> {
    if (this.slotsOf(tenant) === 0) return start(false);
    for (let pause = 25; ; pause = Math.min(pause * 2, 250)) {
      const refused = this.refusedAt.get(tenant);
      try {
        const result = await start(refused !== undefined && Date.now() - refused < REFUSED_RECENTLY_MS);
        if (refused !== undefined) this.refusedAt.delete(tenant);
        return result;
      } catch (error) {
        if (!isSharedSlotTaken(error)) throw error;
        this.refused(tenant);
      }
      await hooks.beforeWaiting();
      const wait = pause / 2 + Math.random() * (pause / 2);
      if (Date.now() + wait > deadline) throw new DatabaseBusyError('no shared write slot in time');
      hooks.waiting(1);
      await sleep(wait);
      hooks.waiting(-1);
    }
  }
}
