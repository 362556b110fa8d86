import type { ValidationOptions } from 'class-validator';
import { IsWebUrl, URL_AFTER_SCHEME_PATTERN } from '../common/validation/validators';

/**
 * What IsNotifyUrl accepts, as far as a schema can say it: http:// is taken in test mode
 * (NotifyUrlPolicy refuses it in live, and private destinations in both).
 */
export const NOTIFY_URL_SCHEMA = {
  type: 'string',
  format: 'uri',
  maxLength: 2048,
  // Schemes are case-insensitive (RFC 3986 §3.1), as the server reads them.
  pattern: `^[Hh][Tt][Tt][Pp][Ss]?://${URL_AFTER_SCHEME_PATTERN}`,
  description:
    'Absolute https:// URL (http:// also in test mode), at most 2048 characters; never a private or loopback address, nor a name only a private network resolves (no dot, or under .localhost, .local, .home.arpa or .internal)',
} as const;

/**
 * The form of a notify_url: an absolute http(s) URL without credentials, at most 2048
 * characters. Scheme per environment and destination are checked by NotifyUrlPolicy.
 */
export function IsNotifyUrl(options?: ValidationOptions) {
  return IsWebUrl(
    'isNotifyUrl',
    (url) => url.protocol === 'https:' || url.protocol === 'http:',
    '$property must be an absolute https:// URL (http:// also in test mode) of at most 2048 characters, written as RFC 3986 allows (an xn-- host, anything else percent-encoded)',
    options,
  );
}
