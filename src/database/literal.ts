import { escapeLiteral } from 'pg';

/**
 * A value as an SQL literal, for the few statements that share a round trip with BEGIN or
 * COMMIT (see Db) and so cannot take parameters. Strings go through pg's escapeLiteral
 * (quotes and backslashes, on a UTF-8 connection); numbers must be finite integers.
 */
export function literal(value: string | number | Buffer): string {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new Error(`not an integer literal: ${value}`);
    return String(value);
  }
  if (Buffer.isBuffer(value)) return `decode('${value.toString('hex')}', 'hex')`;
  return escapeLiteral(value);
}
