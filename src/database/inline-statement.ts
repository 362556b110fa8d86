import { quoted } from './literal';

/**
 * A parameterized statement with its values written in as literals, for a simple-query
 * message that cannot carry parameters (Db, behind a transaction pooler: the statement
 * shares one message with the settings that must be in force while it runs).
 *
 * Each value becomes a quoted literal of no declared type, which PostgreSQL types from
 * its context exactly as it types the untyped text parameters pg sends; values are
 * converted as pg converts parameters (or as `write` says: Db's batched statements cast
 * each to its declared type). `$n` is a parameter only where PostgreSQL's lexer would
 * read one: not inside a string (`'…'`, `E'…'` with its backslash escapes, `$tag$…$tag$`),
 * an identifier (`"…"`, `a$1`) or a comment (`--` to the end of the line, or a block).
 */
export function inlineStatement(
  text: string,
  values: readonly unknown[],
  write: (value: unknown, position: number) => string = inlineValue,
): string {
  return text.replace(STEP_OVER_OR_PARAMETER, (match, _tag, index: string | undefined) => {
    if (index === undefined) return match;
    const position = Number(index) - 1;
    if (position < 0 || position >= values.length) {
      throw new Error(`statement refers to $${index} but has ${values.length} values`);
    }
    return write(values[position], position);
  });
}

/**
 * What the scan steps over whole, or a parameter (`$n`, the second group; the first is a
 * dollar-quote's tag, positional because named groups cost a per-match object, twice the
 * scan's time). A tag cannot start with a digit, so `$1` is never one; E'' comes before ''
 * because its `\'` does not end it. Block comments are taken as not nested.
 */
const STEP_OVER_OR_PARAMETER = new RegExp(
  [
    String.raw`\b[eE]'(?:[^'\\]|\\[\s\S]|'')*'`,
    String.raw`'(?:[^']|'')*'`,
    String.raw`"(?:[^"]|"")*"`,
    String.raw`\$([A-Za-z_\u0080-\uffff][\w\u0080-\uffff]*)?\$[\s\S]*?\$\1\$`,
    String.raw`--[^\n]*`,
    String.raw`/\*[\s\S]*?\*/`,
    // Not after a letter, a digit or $: `a$1` is an identifier, as PostgreSQL reads it.
    String.raw`(?<![\w$\u0080-\uffff])\$(\d+)`,
  ].join('|'),
  'g',
);

export function inlineValue(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (Buffer.isBuffer(value)) return quoted(`\\x${value.toString('hex')}`);
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw new Error('an invalid Date cannot be a statement value');
    return `'${value.toISOString()}'`;
  }
  if (Array.isArray(value)) return quoted(arrayLiteral(value));
  switch (typeof value) {
    case 'string':
      return quoted(value);
    case 'number':
    case 'bigint':
    case 'boolean':
      return `'${String(value)}'`;
    case 'object':
      return quoted(JSON.stringify(value));
    default:
      throw new Error(`a ${typeof value} cannot be a statement value`);
  }
}

/** A PostgreSQL array literal, as pg writes an array parameter: `{"a","b",NULL}`. */
function arrayLiteral(values: readonly unknown[]): string {
  const elements = values.map((element) => {
    if (element === null || element === undefined) return 'NULL';
    if (Array.isArray(element)) return arrayLiteral(element);
    const text = Buffer.isBuffer(element)
      ? `\\x${element.toString('hex')}`
      : element instanceof Date
        ? element.toISOString()
        : typeof element === 'object'
          ? JSON.stringify(element)
          : String(element as string | number | bigint | boolean);
    return `"${text.replace(/[\\"]/g, (char) => `\\${char}`)}"`;
  });
  return `{${elements.join(',')}}`;
}
