import { DomainError } from './domain-error';

/**
 * parameter_unknown for a field or query parameter no rule names; `why` is added to the
 * message. A name that is empty (`?=`, `{"": 1}`) is said so, not left blank.
 */
export function unknownParameter(name: string, why?: string): DomainError {
  const named = name === '' ? 'Received unknown parameter with an empty name' : `Received unknown parameter: ${name}`;
  return new DomainError('parameter_unknown', why ? `${named} (${why})` : named, name);
}
