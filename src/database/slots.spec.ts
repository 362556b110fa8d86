import { Slots } from './slots';

const busy = () => new Error('busy');

describe('Slots', () => {
  it('lets one tenant hold no more than its share, and other tenants the rest', async () => {
    const slots = new Slots(3, 1);
    await slots.acquire('hot', 1000, busy);
    await slots.acquire('hot', 1000, busy);
    let third = false;
    const waiting = slots.acquire('hot', 1000, busy).then(() => (third = true));
    await slots.acquire('other', 1000, busy);
    await Promise.resolve();
    expect(third).toBe(false);

    slots.release('other'); // a free slot, but the hot tenant is at its share
    await Promise.resolve();
    expect(third).toBe(false);
    slots.release('hot');
    await waiting;
    expect(third).toBe(true);
  });

  it('keeps the reserve for tenants holding none, however many tenants are busy', async () => {
    const slots = new Slots(6, 2);
    for (let i = 0; i < 4; i++) await slots.acquire('hot', 1000, busy);
    await slots.acquire('webhooks', 1000, busy);
    // Two busy tenants: the second gets one slot, then waits like the first.
    await expect(slots.acquire('webhooks', 20, busy)).rejects.toThrow('busy');
    await expect(slots.acquire('hot', 20, busy)).rejects.toThrow('busy');
    await slots.acquire('other', 1000, busy);
  });

  it('lets in every waiter one release makes eligible', async () => {
    const slots = new Slots(6, 2);
    await slots.acquire('t', 1000, busy);
    for (let i = 0; i < 3; i++) await slots.acquire('u', 1000, busy);
    // 2 free, the reserve: u may not take another, and t's second must wait too.
    const granted: string[] = [];
    const u = slots.acquire('u', 1000, busy).then(() => granted.push('u'));
    const t = slots.acquire('t', 1000, busy).then(() => granted.push('t'));
    slots.release('t'); // 3 free: u is above the reserve again, and t now holds none
    await Promise.all([u, t]);
    expect(granted).toEqual(['u', 't']);
  });

  it('grants waiters in arrival order, skipping those whose tenant is at its share', async () => {
    const slots = new Slots(2, 1);
    await slots.acquire('a', 1000, busy);
    await slots.acquire('b', 1000, busy);
    const order: string[] = [];
    const a2 = slots.acquire('a', 1000, busy).then(() => order.push('a2'));
    const c = slots.acquire('c', 1000, busy).then(() => order.push('c'));
    slots.release('b');
    await c;
    slots.release('c');
    await Promise.resolve();
    expect(order).toEqual(['c']);
    slots.release('a');
    await a2;
    expect(order).toEqual(['c', 'a2']);
  });

  it('rejects a waiter after its time limit and gives its place to no one', async () => {
    const slots = new Slots(1, 0);
    await slots.acquire('a', 1000, busy);
    await expect(slots.acquire('b', 20, busy)).rejects.toThrow('busy');
    slots.release('a');
    await slots.acquire('b', 20, busy);
  });
});
