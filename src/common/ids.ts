import { randomBytes } from 'node:crypto';

export type IdPrefix = 'ord' | 'rf' | 'mch' | 'key' | 'ful';

/** Random, unguessable, prefixed ids: 128 bits from the CSPRNG, as hex. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBytes(16).toString('hex')}`;
}
