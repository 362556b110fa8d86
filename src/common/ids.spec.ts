import { newId } from './ids';

describe('newId', () => {
  it('gives 128 random bits as hex after the prefix, never the same twice across refills of its pool', () => {
    const ids = Array.from({ length: 2000 }, () => newId('ord'));
    for (const id of ids) expect(id).toMatch(/^ord_[0-9a-f]{32}$/);
    expect(new Set(ids).size).toBe(ids.length);
    // Every hex digit turns up in every position: the bytes are not reused or left zero.
    for (let position = 4; position < 36; position++) {
      expect(new Set(ids.map((id) => id[position])).size).toBe(16);
    }
  });
});
