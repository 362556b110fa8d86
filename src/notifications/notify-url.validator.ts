import type { ValidationOptions } from 'class-validator';
import { IsWebUrl } from '../common/validation/validators';

/**
 * The form of a notify_url: an absolute http(s) URL without credentials, at most 2048
 * characters. Scheme per environment and destination are checked by NotifyUrlPolicy.
 */
export function IsNotifyUrl(options?: ValidationOptions) {
  return IsWebUrl(
    'isNotifyUrl',
    (url) => url.protocol === 'https:' || url.protocol === 'http:',
    '$property must be an absolute https:// URL (http:// also in test mode) of at most 2048 characters',
    options,
  );
}
