/**
 * A value as an SQL literal, for the few statements that share a round trip with BEGIN or
 * COMMIT (see Db) and so cannot take parameters. Strings are quoted as pg's escapeLiteral
 * quotes them (quotes and backslashes, on a UTF-8 connection); numbers must be finite
 * integers.
 */
export function literal(value: string | number | Buffer): string {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new Error(`not an integer literal: ${value}`);
    return String(value);
  }
  if (Buffer.isBuffer(value)) return `decode('${value.toString('hex')}', 'hex')`;
  return quoted(value);
}

const SPECIAL = /['\\]/g;

/**
 * A string as a quoted SQL literal, character for character what pg's escapeLiteral
 * writes: quotes and backslashes doubled, and an E prefix when there is a backslash, so
 * that it reads the same whatever standard_conforming_strings says. escapeLiteral builds
 * its result one character at a time, which made a stored answer's body (hundreds of
 * characters, on every keyed write) the largest allocation of the request
 * (docs/benchmarks.md); one replace does the same in one pass.
 */
export function quoted(value: string): string {
  const escaped = `'${value.replace(SPECIAL, '$&$&')}'`;
  return value.includes('\\') ? ` E${escaped}` : escaped;
}
