import { randomBytes } from 'node:crypto';
import secureJsonParse from 'secure-json-parse';
import { DomainError } from '../errors/domain-error';
import { refuseUnstorableJson } from './storable-json';

/**
 * A number written with a fraction or an exponent (`2990.0`, `1.9999999999999999`, `3e3`)
 * inside a parsed body. JSON.parse would make integers of some of them, and no field of
 * the API takes anything but an integer, so each is kept as written and refused under
 * its own field's name, whatever its value (docs/errors.md). It is no JSON object: a map
 * field refuses it like any other number, and a fingerprint tells `1.5` from
 * `{"fraction":"1.5"}`.
 */
export class WrittenNumber {
  constructor(readonly written: string) {
    Object.freeze(this);
  }

  /** Stored (a webhook's payload) as the number it denotes. */
  toJSON(): number {
    return Number(this.written);
  }
}

/** Keys such as `__proto__` are refused (as prototype poisoning) rather than dropped. */
const SECURE = { protoAction: 'error', constructorAction: 'error' } as const;

/** secure-json-parse, whose refusal is valid JSON all the same: said so, not "not valid JSON". */
function parseSecurely(text: string): unknown {
  try {
    return secureJsonParse.parse(text, SECURE);
  } catch (error) {
    if (!(error instanceof SyntaxError) || !/forbidden prototype property/.test(error.message)) throw error;
    throw new DomainError(
      'invalid_json',
      'The body holds a "__proto__" key, or a "constructor" key holding "prototype": refused as prototype poisoning.',
    );
  }
}

/** A string token, or a number token (JSON's grammar: strings are skipped whole). */
const STRING_OR_NUMBER = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;

/** The bodies parseJsonText made a WrittenNumber in: only those need withoutWrittenNumbers' walk. */
const holdingWrittenNumbers = new WeakSet<object>();
/** The refusal of a body's unstorable string, kept for later when parseJsonText was asked to. */
const unstorableStrings = new WeakMap<object, DomainError>();

/**
 * JSON text parsed as JSON.parse would, except that inside an object or array each number
 * written with a fraction or an exponent is a WrittenNumber (a bare top-level number stays
 * a number: a body or event that is not an object is refused as a whole). Throws
 * JSON.parse's SyntaxError, secure-json-parse's for a `__proto__` key, and the
 * DomainError of refuseUnstorableJson (too deep, or a string PostgreSQL cannot store).
 * `laterForStrings`: a string PostgreSQL cannot store is not thrown but kept for
 * unstorableStringIn, so that a request body's validation can first say that its field
 * is unknown, which is the first thing to fix.
 */
export function parseJsonText(text: string, { laterForStrings = false } = {}): unknown {
  const parsed = parseSecurely(text);
  if (typeof parsed !== 'object' || parsed === null) return parsed;
  // Before anything walks it again (the reviver below recurses): the depth always.
  const unstorable = refuseUnstorableJson(parsed);
  if (unstorable && !laterForStrings) throw unstorable;
  const tooDeep = unstorable && refuseUnstorableJson(parsed, '', { strings: false });
  if (tooDeep) throw tooDeep;
  const result = withWrittenNumbers(text, parsed);
  if (unstorable) unstorableStrings.set(result, unstorable);
  return result;
}

/** The refusal parseJsonText kept for this body (`laterForStrings`), or null. */
export function unstorableStringIn(body: unknown): DomainError | null {
  return (typeof body === 'object' && body !== null && unstorableStrings.get(body)) || null;
}

/** The parsed value, or its parse with each number written with a fraction made a WrittenNumber. */
function withWrittenNumbers(text: string, parsed: object): object {
  // Cheap test first: a number with a fraction or exponent where a value starts.
  if (!/[:,[]\s*-?\d+[.eE]/.test(text)) return parsed;
  // Each such number becomes an object under a key the text cannot contain, so a client
  // cannot forge one; the reviver turns those objects into WrittenNumbers.
  let marker: string;
  do marker = `kuko-number-${randomBytes(8).toString('hex')}`;
  while (text.includes(marker));
  const marked = text.replace(STRING_OR_NUMBER, (token) =>
    token[0] !== '"' && /[.eE]/.test(token) ? `{"${marker}":${JSON.stringify(token)}}` : token,
  );
  if (marked === text) return parsed;
  const revived = JSON.parse(marked, (_key, value: unknown) => {
    if (typeof value === 'object' && value !== null && Object.hasOwn(value, marker)) {
      return new WrittenNumber((value as Record<string, string>)[marker]);
    }
    return value;
  }) as object;
  holdingWrittenNumbers.add(revived);
  return revived;
}

/**
 * The value with each WrittenNumber replaced by NaN, which every rule of a DTO refuses as
 * it would any number that is not an integer (or any value that is not a string or an
 * object), so class-validator and class-transformer never see one. Null when there is none
 * (any value parseJsonText did not make one in).
 */
export function withoutWrittenNumbers(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || !holdingWrittenNumbers.has(value)) return null;
  const walk = (item: unknown): unknown => {
    if (item instanceof WrittenNumber) return Number.NaN;
    if (Array.isArray(item)) return item.map(walk);
    if (typeof item === 'object' && item !== null) {
      return Object.fromEntries(Object.entries(item).map(([key, child]) => [key, walk(child)]));
    }
    return item;
  };
  return walk(value);
}
