import { registerDecorator, ValidateIf, ValidationOptions } from 'class-validator';
import { isJsonObject } from './storable-json';

/**
 * An optional field: it may be left out, but when present it must be valid. Unlike
 * class-validator's IsOptional, an explicit null is not taken as absent (a live refund
 * with "out_refund_no": null must be refused, not created without one).
 */
export function Optional() {
  return ValidateIf((_object, value) => value !== undefined);
}

/**
 * A string's length as PostgreSQL's char_length counts it, and as every length rule of
 * the API does (docs/errors.md): Unicode code points, not UTF-16 units (an emoji is one,
 * not two) nor what a font draws (U+FE0F is one, not none).
 */
export function charCount(value: string): number {
  return [...value].length;
}

/**
 * A string of `min` to `max` characters, counted as PostgreSQL counts them (charCount).
 * class-validator's Length counts a variation selector such as U+FE0F as nothing, so a
 * string it accepts could break a CHECK in the database.
 */
export function Chars(min: number, max: number, options?: ValidationOptions) {
  return custom(
    'chars',
    (value) => {
      if (typeof value !== 'string') return false;
      const count = charCount(value);
      return count >= min && count <= max;
    },
    {
      message:
        min > 0 ? `$property must be ${min} to ${max} characters` : `$property must be at most ${max} characters`,
      ...options,
    },
  );
}

/** Currencies ICU knows, i.e. ISO 4217 alpha codes. */
const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));

export function IsCurrencyCode(options?: ValidationOptions) {
  return custom('isCurrencyCode', (value) => typeof value === 'string' && CURRENCIES.has(value), {
    message: '$property must be an upper-case ISO 4217 currency code, such as USD',
    ...options,
  });
}

/**
 * An absolute URL as RFC 3986 writes one, as pattern text: only the characters it allows
 * (an international domain as its `xn--` form, anything else percent-encoded, each `%`
 * followed by two hexadecimal digits), and after the scheme and `//` a host without user
 * information (not even an empty `@`) or `%` (IDNA would decode those into other labels),
 * an optional port, then a path, a query and a fragment, each optional. So no whitespace,
 * control character, `"`, `<`, `>`, `\`, `^`, `` ` ``, `{`, `|` or `}` anywhere, `[` `]` only
 * around an IPv6 host, and one `#` at most: what an OpenAPI `format: uri` validator takes.
 * The WHATWG parser behind `new URL` would take more and silently rewrite it (` https://a`,
 * `https:\\a`, `https:///a` and `https:a` all become `https://a/`; `a|b` is sent as
 * `a%7Cb`; `https://пример.example/é` becomes `https://xn--e1afmkfd.example/%C3%A9`), so
 * the URL stored and answered would not be the one used. The server's check (AS_WRITTEN)
 * and the OpenAPI document's patterns (beside its `format: uri`) are built from these, so
 * they cannot drift. No `\uNNNN`: regular expression engines such as RE2 read only `\xNN`.
 */
/** A path segment's characters (RFC 3986 pchar): unreserved, sub-delims, `:`, `@`, escapes. */
const PCHAR = "([A-Za-z0-9._~!$&'()*+,;=:@-]|%[0-9A-Fa-f]{2})";
/** A host: an IPv6 literal in brackets, or a name of unreserved and sub-delims characters. */
const HOST = "(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9._~!$&'()*+,;=-]+)";
/** A path, query or fragment after the host (and port), if any, to the end. */
export const URL_REST_PATTERN = `(/(${PCHAR}|/)*)?([?](${PCHAR}|[/?])*)?(#(${PCHAR}|[/?])*)?$`;
export const URL_AFTER_SCHEME_PATTERN = `${HOST}(:[0-9]*)?${URL_REST_PATTERN}`;
const AS_WRITTEN = new RegExp(`^[A-Za-z][A-Za-z0-9+.-]*://${URL_AFTER_SCHEME_PATTERN}`, 'u');

/**
 * An absolute URL without credentials, of at most 2048 characters, whose scheme and host
 * `accepts` takes: the one form check behind every URL field (IsCallbackUrl, IsNotifyUrl).
 * Port 0 is refused: nothing can be reached there.
 */
export function IsWebUrl(name: string, accepts: (url: URL) => boolean, message: string, options?: ValidationOptions) {
  return custom(
    name,
    (value) => {
      if (typeof value !== 'string' || charCount(value) > 2048) return false;
      if (!AS_WRITTEN.test(value)) return false;
      try {
        const url = new URL(value);
        return !url.username && !url.password && url.port !== '0' && accepts(url);
      } catch {
        return false;
      }
    },
    { message, ...options },
  );
}

/** An absolute https:// URL, or http:// to localhost for development; at most 2048 characters. */
export function IsCallbackUrl(options?: ValidationOptions) {
  return IsWebUrl(
    'isCallbackUrl',
    (url) => url.protocol === 'https:' || (url.protocol === 'http:' && url.hostname === 'localhost'),
    '$property must be an absolute https:// URL (or http://localhost) of at most 2048 characters, written as RFC 3986 allows (an xn-- host, anything else percent-encoded)',
    options,
  );
}

/** At most 20 keys of at most 40 characters, each with a string value of at most 500. */
export function IsMetadata(options?: ValidationOptions) {
  return custom(
    'isMetadata',
    (value) => {
      if (!isJsonObject(value)) return false;
      const entries = Object.entries(value);
      return (
        entries.length <= 20 &&
        entries.every(
          ([key, item]) =>
            key.length >= 1 && charCount(key) <= 40 && typeof item === 'string' && charCount(item) <= 500,
        )
      );
    },
    {
      message:
        '$property must be an object of at most 20 keys (1-40 characters) with string values (at most 500 characters)',
      ...options,
    },
  );
}

const AS_SENT = Symbol('asSent');

/**
 * A free-form map of strings, kept exactly as sent. Without it, keys named like members
 * of Object.prototype (`constructor`, `toString` …) would be silently dropped: Nest's
 * pipe strips `constructor` and `prototype` against prototype pollution, and
 * class-transformer skips the others. A map of strings pollutes nothing (`__proto__` is
 * refused when the body is parsed). The validation pipe puts the map back (asSentOf).
 */
export function AsSent(): PropertyDecorator {
  return (target, property) => {
    const names: string[] = Reflect.getMetadata(AS_SENT, target.constructor) ?? [];
    Reflect.defineMetadata(AS_SENT, [...names, String(property)], target.constructor);
  };
}

/** The properties of a DTO class marked @AsSent(). */
export function asSentOf(type: unknown): readonly string[] {
  return (typeof type === 'function' && Reflect.getMetadata(AS_SENT, type)) || [];
}

/** The merchant's own references: 1-64 characters of letters, digits, _ and -. */
export const REFERENCE_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

function custom(name: string, validate: (value: unknown) => boolean, options: ValidationOptions) {
  return (target: object, propertyName: string) =>
    registerDecorator({ name, target: target.constructor, propertyName, options, validator: { validate } });
}
