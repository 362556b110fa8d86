import { DomainError } from '../errors/domain-error';

/** Deeper than any request of this API; bounds the recursive code that walks a body. */
export const MAX_JSON_DEPTH = 32;
// U+0000 cannot be stored in PostgreSQL text or jsonb; an unpaired UTF-16 surrogate is
// refused by jsonb and silently replaced in text, so it is refused too.
// eslint-disable-next-line no-control-regex -- NUL is exactly what must be found
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Checks a parsed JSON value (a body, a query) before anything else walks or stores it:
 * nesting depth, and strings (keys included) that PostgreSQL cannot hold. Iterative, so a
 * hostile body cannot overflow the stack here. Returns the refusal, or null. `name` is
 * what the value is called in errors when it is one parameter (a path's `id`). With
 * `strings: false`, only the depth is checked.
 */
export function refuseUnstorableJson(value: unknown, name = '', { strings = true } = {}): DomainError | null {
  const pending: [unknown, string, number][] = [[value, name, 0]];
  while (pending.length > 0) {
    const [item, path, depth] = pending.pop()!;
    if (typeof item === 'string') {
      if (strings && UNSTORABLE.test(item)) return unstorable(path);
      continue;
    }
    if (typeof item !== 'object' || item === null) continue;
    if (depth >= MAX_JSON_DEPTH) {
      // The top-level field it is under: the full path would be as long as the nesting.
      const field = path.split('.')[0] || null;
      return new DomainError('parameter_invalid', `JSON may be nested at most ${MAX_JSON_DEPTH} levels deep.`, field);
    }
    for (const [key, child] of Object.entries(item)) {
      const childPath = path ? `${path}.${key}` : key;
      if (strings && UNSTORABLE.test(key)) return unstorable(childPath);
      pending.push([child, childPath, depth + 1]);
    }
  }
  return null;
}

function unstorable(path: string): DomainError {
  return new DomainError(
    'parameter_invalid',
    `${path || 'The body'} must not contain the NUL character or unpaired UTF-16 surrogates.`,
    path || null,
  );
}

/** A JSON object: not null, not an array (what a body, a map or an event must be). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  // Not a class instance: a number written with a fraction (WrittenNumber) is no object.
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}
