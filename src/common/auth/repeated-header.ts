import { DomainError } from '../errors/domain-error';

/**
 * A credential header (X-Api-Key, Authorization) sent more than once. Neither is a list
 * (RFC 9110 §5.3), and Node would keep one line or join them into a value no credential
 * matches. Refused without trying any, so it is a client's mistake, not a guess, and
 * the failure limiter does not count it (AuthFailureLimiter.refuse).
 */
export class RepeatedCredentialHeader extends DomainError {
  constructor(header: string, times: number) {
    super('api_key_invalid', `The ${header} header was sent ${times} times; send it once.`, header);
  }
}
