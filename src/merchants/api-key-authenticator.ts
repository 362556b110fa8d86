import { Injectable } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';
import type { Environment } from '../domain/environment';
import { RepeatedCredentialHeader } from '../common/auth/repeated-header';
import { DomainError } from '../common/errors/domain-error';
import { IdempotencyKeysRepository, StoredKey } from '../idempotency/idempotency-keys.repository';
import { environmentOf, hashApiKey } from './api-key';
import { ApiKeysRepository } from './api-keys.repository';

export interface Authenticated {
  merchantId: string;
  environment: Environment;
  /** With an Idempotency-Key: what is stored under it (null: nothing yet). */
  stored: StoredKey | null;
}

/**
 * Checks an `X-Api-Key` value. The key is looked up by its SHA-256 (the key itself is
 * never stored or logged) and the stored hash compared in constant time; the key's prefix
 * decides the environment. With an Idempotency-Key the answer stored under it is read in
 * the same statement, so that a replay costs one round trip in all.
 */
@Injectable()
export class ApiKeyAuthenticator {
  constructor(
    private readonly apiKeys: ApiKeysRepository,
    private readonly idempotencyKeys: IdempotencyKeysRepository,
  ) {}

  /** `sent`: every X-Api-Key header line of the request (RepeatedCredentialHeader if not one). */
  async authenticate(sent: readonly string[], idempotencyKey: string | null): Promise<Authenticated> {
    const key = sent[0];
    if (key === undefined || (sent.length === 1 && key === '')) {
      throw new DomainError('api_key_missing', 'Send your secret API key in the X-Api-Key header.', 'X-Api-Key');
    }
    if (sent.length > 1) throw new RepeatedCredentialHeader('X-Api-Key', sent.length);
    const environment = environmentOf(key);
    // environmentOf matches the whole key format, so null also means malformed.
    if (!environment) throw invalidKey();

    const hash = hashApiKey(key);
    const found =
      idempotencyKey === null
        ? await this.apiKeys.findActive(hash).then((active) => active && { ...active, stored: null })
        : await this.idempotencyKeys.findApiKeyWithAnswer(hash, environment, idempotencyKey);
    if (!found || !timingSafeEqual(found.keyHash, hash)) throw invalidKey();
    return { merchantId: found.merchantId, environment, stored: found.stored };
  }
}

function invalidKey(): DomainError {
  return new DomainError('api_key_invalid', 'The API key is not valid, or has been revoked.', 'X-Api-Key');
}
