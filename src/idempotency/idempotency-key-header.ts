import { DomainError } from '../common/errors/domain-error';
import { headerLines } from '../common/http/header-lines';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

/** The header as the OpenAPI document describes it on every POST it applies to. */
export const IDEMPOTENCY_KEY_DOC = {
  name: IDEMPOTENCY_KEY_HEADER,
  required: false,
  description:
    'Makes the request safe to retry for 24 hours (UUID v4 recommended): a retry with the same key and body ' +
    'replays the first answer. 1-255 printable ASCII characters, with no space at either end (HTTP drops it), ' +
    'or the same key quoted as an RFC 8941 string (up to 512 characters as sent). See docs/idempotency.md.',
  // The bare key, or its quoted form (`\"` and `\\` escapes); `""` is the quoted form of
  // an empty key, which the server refuses too. A bare key neither begins nor ends with a
  // space: HTTP takes those as whitespace around the value, not part of it.
  schema: {
    type: 'string',
    minLength: 1,
    maxLength: 512,
    pattern:
      '^(?!""$)(?:[\\x21-\\x7e](?:[\\x20-\\x7e]{0,253}[\\x21-\\x7e])?|"(?:[\\x20\\x21\\x23-\\x5b\\x5d-\\x7e]|\\\\["\\\\]){1,255}")$',
  },
  example: '8f14e45f-ceea-4e7a-9a3b-7f1c2d3e4a5b',
};
const PRINTABLE_ASCII = /^[\x20-\x7e]{1,255}$/;
/** A bare key as HTTP can carry it: a space at either end would be read as whitespace around it. */
const BARE_KEY = /^[\x21-\x7e](?:[\x20-\x7e]{0,253}[\x21-\x7e])?$/;
// RFC 8941 sf-string: a quoted string whose only escapes are \" and \\.
const SF_STRING = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/;

/**
 * The Idempotency-Key of a request, from its raw headers (so a header sent twice is seen,
 * not silently joined). null when absent. The quoted form of the IETF draft names the
 * same key as the bare value.
 */
export function parseIdempotencyKey(rawHeaders: string[]): string | null {
  const values = headerLines(rawHeaders, 'idempotency-key');
  if (values.length === 0) return null;
  if (values.length > 1) throw invalid('The Idempotency-Key header must be sent once.');
  const quoted = SF_STRING.exec(values[0]);
  const key = quoted ? quoted[1].replace(/\\(["\\])/g, '$1') : values[0];
  if (!PRINTABLE_ASCII.test(key)) {
    throw invalid('The Idempotency-Key must be 1 to 255 printable ASCII characters; a UUID v4 is recommended.');
  }
  // Node trims a header value before it gets here; this keeps the rule the document states.
  if (!quoted && !BARE_KEY.test(key)) {
    throw invalid('The Idempotency-Key cannot begin or end with a space; quote it as an RFC 8941 string to keep one.');
  }
  return key;
}

function invalid(message: string): DomainError {
  return new DomainError('idempotency_key_invalid', message, IDEMPOTENCY_KEY_HEADER);
}
