import { registerDecorator, ValidationOptions } from 'class-validator';

/**
 * The form of a notify_url: an absolute http(s) URL without credentials, at most 2048
 * characters. Scheme per environment and destination are checked by NotifyUrlPolicy.
 */
export function IsNotifyUrl(options?: ValidationOptions) {
  return (target: object, propertyName: string) =>
    registerDecorator({
      name: 'isNotifyUrl',
      target: target.constructor,
      propertyName,
      options: {
        message: '$property must be an absolute https:// URL (http:// also in test mode) of at most 2048 characters',
        ...options,
      },
      validator: {
        validate(value: unknown) {
          if (typeof value !== 'string' || value.length > 2048) return false;
          try {
            const url = new URL(value);
            return !url.username && !url.password && (url.protocol === 'https:' || url.protocol === 'http:');
          } catch {
            return false;
          }
        },
      },
    });
}
