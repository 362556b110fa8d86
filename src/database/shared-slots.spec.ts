import { DatabaseBusyError } from './pg-errors';
import { SharedSlots, SlotWaitHooks } from './shared-slots';

/** kuko_take_write_slot's refusal, as pg reports it. */
const refusal = () => Object.assign(new Error('tenant holds all of its write slots'), { code: 'KUW01' });

function recordingHooks() {
  const seen = { asked: 0, waiting: 0, maxWaiting: 0 };
  const hooks: SlotWaitHooks = {
    beforeWaiting: async () => {
      seen.asked += 1;
    },
    waiting: (delta) => {
      seen.waiting += delta;
      seen.maxWaiting = Math.max(seen.maxWaiting, seen.waiting);
    },
  };
  return { seen, hooks };
}

describe('SharedSlots', () => {
  const slots = new SharedSlots(10);

  it("claims a merchant's share, two for the events about one order, none for the service's own work", () => {
    expect(slots.claim('mch_0123')).toEqual([`SELECT kuko_take_write_slot('mch_0123', 10)`]);
    expect(slots.claim('order:ord_0123')).toEqual([`SELECT kuko_take_write_slot('order:ord_0123', 2)`]);
    for (const tenant of ['notifications', 'purge', 'admin', 'webhook:kukopay'])
      expect(slots.claim(tenant)).toEqual([]);
    expect(new SharedSlots(0).claim('mch_0123')).toEqual([]);
  });

  it('tries again after a refusal, its claim then on its own, asking the hooks before each wait', async () => {
    const { seen, hooks } = recordingHooks();
    const tries: boolean[] = [];
    const result = await slots.run('mch_retry', Date.now() + 5000, hooks, async (refusedRecently) => {
      tries.push(refusedRecently);
      if (tries.length < 3) throw refusal();
      return 'done';
    });
    expect({ result, tries, ...seen }).toEqual({
      result: 'done',
      tries: [false, true, true],
      // Db's hooks ask the caller only the first time (Db.waitHooks).
      asked: 2,
      waiting: 0,
      maxWaiting: 1,
    });
    // The success forgot the refusal: the next transaction sends its claim with BEGIN again.
    await slots.run('mch_retry', Date.now() + 5000, hooks, async (refusedRecently) => {
      expect(refusedRecently).toBe(false);
    });
  });

  it('answers busy once the deadline has passed, and lets any other failure through at once', async () => {
    const { hooks } = recordingHooks();
    const refused = slots.run('mch_busy', Date.now() + 200, hooks, async () => {
      throw refusal();
    });
    await expect(refused).rejects.toBeInstanceOf(DatabaseBusyError);
    let tries = 0;
    const failed = slots.run('mch_other', Date.now() + 5000, hooks, async () => {
      tries += 1;
      throw new Error('connection terminated');
    });
    await expect(failed).rejects.toThrow('connection terminated');
    expect(tries).toBe(1);
  });

  it('lets the caller refuse to wait (a twin of a key in flight)', async () => {
    const hooks: SlotWaitHooks = {
      beforeWaiting: async () => {
        throw new Error('409');
      },
      waiting: () => undefined,
    };
    await expect(
      slots.run('mch_twin', Date.now() + 5000, hooks, async () => {
        throw refusal();
      }),
    ).rejects.toThrow('409');
  });
});
