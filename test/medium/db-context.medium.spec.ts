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

  /** A transaction that reads its id, says so, waits for `until`, then reads it again. */
  const overlapping = (started: () => void, until: Promise<void>) =>
    m.db.transaction('test', async () => {
      const before = await txid();
      started();
      await until;
      return { before, after: await txid() };
    });

  it('keeps each overlapping transaction on its own, while others end around it', async () => {
    for (let round = 0; round < 20; round++) {
      const first = signals();
      const second = signals();
      const firstIds = overlapping(first.start, first.release.promise);
      const secondIds = overlapping(second.start, second.release.promise);
      // Both are open; the first ends, and only then does the second read again.
      await Promise.all([first.started, second.started]);
      first.release.resolve();
      const firstRead = await firstIds;
      second.release.resolve();
      const secondRead = await secondIds;

      expect(firstRead.after).toBe(firstRead.before);
      expect(secondRead.after).toBe(secondRead.before);
      expect(secondRead.before).not.toBe(firstRead.before);
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

function signals() {
  let start!: () => void;
  const started = new Promise<void>((resolve) => (start = resolve));
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { start, started, release: { promise, resolve } };
}
