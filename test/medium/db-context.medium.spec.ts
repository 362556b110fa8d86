import { MediumContext, startMedium } from '../support/medium';

/**
 * Db finds the open transaction through AsyncLocalStorage, which it disables whenever the
 * last open transaction ends (docs/decisions.md, "Our own transaction context instead of
 * nestjs-cls"). Overlapping transactions must keep their own, whichever ends first.
 */
describe('the transaction context of Db', () => {
  let m: MediumContext;

  beforeAll(async () => {
    m = await startMedium();
  });
  afterAll(() => m.close());

  const txid = async () => (await m.db.one<{ id: string }>('SELECT txid_current()::text AS id'))!.id;

  /** A transaction that reads its id, waits for `until`, then reads it again. */
  const overlapping = (until: Promise<void>) =>
    m.db.transaction('test', async () => {
      const before = await txid();
      await until;
      return { before, after: await txid() };
    });

  it('keeps each overlapping transaction on its own, while others end around it', async () => {
    for (let round = 0; round < 20; round++) {
      let releaseFirst!: () => void;
      let releaseSecond!: () => void;
      const first = overlapping(new Promise((resolve) => (releaseFirst = resolve)));
      const second = overlapping(new Promise((resolve) => (releaseSecond = resolve)));
      // Let both start, end the first, and only then let the second read again.
      await new Promise((resolve) => setTimeout(resolve, 5));
      releaseFirst();
      const firstIds = await first;
      releaseSecond();
      const secondIds = await second;

      expect(firstIds.after).toBe(firstIds.before);
      expect(secondIds.after).toBe(secondIds.before);
      expect(secondIds.before).not.toBe(firstIds.before);
    }
  });

  it('leaves no transaction behind once every one has ended, and opens the next one afresh', async () => {
    await Promise.all([m.db.transaction('test', txid), m.db.transaction('test', txid)]);
    expect(() => m.db.requireTransaction('a check')).toThrow('outside a transaction');
    // Outside a transaction each statement is its own.
    expect(await txid()).not.toBe(await txid());

    const inside = await m.db.transaction('test', async () => {
      m.db.requireTransaction('a check');
      return [await txid(), await txid()];
    });
    expect(inside[1]).toBe(inside[0]);
  });
});
