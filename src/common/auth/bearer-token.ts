import { timingSafeEqual } from 'node:crypto';
import { DomainError } from '../errors/domain-error';
import { sha256 } from '../hash';
import { RepeatedCredentialHeader } from './repeated-header';

/**
 * A configured `Authorization: Bearer <token>` (the admin token, the metrics token),
 * checked in one way for all: compared as SHA-256 digests, which have one length, so the
 * comparison takes the same time whatever was sent.
 */
export class BearerToken {
  private readonly expected: Buffer;

  /** `what` names the token in the refusal, e.g. "admin token". */
  constructor(
    token: string,
    private readonly what: string,
  ) {
    this.expected = sha256(token);
  }

  /**
   * null when the request's Authorization header lines (`sent`, see headerLines) are one
   * carrying the token; otherwise the refusal to answer.
   */
  refusal(sent: readonly string[]): DomainError | null {
    const header = sent[0];
    if (sent.length > 1) return new RepeatedCredentialHeader('Authorization', sent.length);
    if (!header) {
      return new DomainError(
        'api_key_missing',
        `Send the ${this.what} as Authorization: Bearer <token>.`,
        'Authorization',
      );
    }
    // The scheme is case-insensitive (RFC 9110 §11.1): bearer and BEARER are Bearer; one
    // or more spaces follow it (§11.4, `1*SP`), and no configured token holds a space.
    const match = /^Bearer +(.+)$/i.exec(header);
    if (match && timingSafeEqual(sha256(match[1]), this.expected)) return null;
    return new DomainError('api_key_invalid', `The ${this.what} is not valid.`, 'Authorization');
  }
}
