import { randomFillSync } from 'node:crypto';

export type IdPrefix = 'ord' | 'rf' | 'mch' | 'key' | 'ful' | 'evt' | 'req';

const ID_BYTES = 16;
/**
 * Random bytes are drawn from the CSPRNG 4 KiB at a time and handed out once each: one
 * call per 256 ids instead of one per id (a `randomBytes` call cost ~1.7 µs here, and a
 * create takes two or three ids). Node's own `randomUUID` keeps such a cache too.
 */
const pool = Buffer.alloc(4096);
let next = pool.length;

/** Whether the value has the form of an id newId(prefix) makes: `ord_` and 32 hex digits. */
export function isIdOf(prefix: IdPrefix, value: string): boolean {
  return (
    value.length === prefix.length + 1 + ID_BYTES * 2 &&
    value.startsWith(`${prefix}_`) &&
    HEX.test(value.slice(prefix.length + 1))
  );
}

const HEX = /^[0-9a-f]+$/;

/** Random, unguessable, prefixed ids: 128 bits from the CSPRNG, as hex. */
export function newId(prefix: IdPrefix): string {
  if (next + ID_BYTES > pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  const id = `${prefix}_${pool.toString('hex', next, next + ID_BYTES)}`;
  next += ID_BYTES;
  return id;
}
