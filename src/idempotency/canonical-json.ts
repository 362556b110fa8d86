import { sha256 } from '../common/hash';
import { WrittenNumber } from '../common/validation/json-text';

/**
 * JSON with object keys sorted and no insignificant whitespace, so that two bodies that
 * mean the same thing (key order, spacing) have one fingerprint.
 */
export function canonicalJson(value: unknown): string {
  // As written (`2990.0`): it is refused, but its fingerprint is not another body's.
  if (value instanceof WrittenNumber) return value.written;
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * SHA-256 of the body's canonical JSON; an absent body counts as {} (docs/idempotency.md).
 * A body of `null` is not absent: it is the JSON text `null`, another request than none.
 */
export function fingerprint(body: unknown): Buffer {
  return sha256(canonicalJson(body === undefined ? {} : body));
}
