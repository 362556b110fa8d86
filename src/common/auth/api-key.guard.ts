import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { Db, NamedStatement } from '../../database/db';
import { KeyRow, STORED_ANSWER_COLUMNS, storedAnswerJoin, toStoredKey } from '../../idempotency/idempotency.store';
import { validKeyOrNull } from '../../idempotency/idempotency-scope';
import { isIdempotentRoute } from '../../idempotency/idempotent.decorator';
import { environmentOf, hashApiKey } from '../../merchants/api-key';
import { DomainError } from '../errors/domain-error';
import { addLogFields } from '../logging/request-logging';
import { AuthFailureLimiter } from './auth-failure-limiter';

/** Not revoked, and not past the grace period of a roll (docs/operations.md); one unique-index probe. */
const keyIsActive = (table: string) =>
  `${table}.revoked_at IS NULL AND (${table}.expires_at IS NULL OR ${table}.expires_at > now())`;

/** The API-key lookup; with $2/$3 (environment, Idempotency-Key) it also reads the stored answer. */
export const API_KEY_LOOKUP: NamedStatement = {
  name: 'kuko_api_key_lookup',
  text: `SELECT merchant_id, key_hash FROM api_keys WHERE key_hash = $1 AND ${keyIsActive('api_keys')}`,
};
export const API_KEY_LOOKUP_WITH_ANSWER: NamedStatement = {
  name: 'kuko_api_key_lookup_with_answer',
  text: `SELECT a.merchant_id, a.key_hash, ${STORED_ANSWER_COLUMNS}
           FROM api_keys a ${storedAnswerJoin('a.merchant_id', '$2', '$3')}
          WHERE a.key_hash = $1 AND ${keyIsActive('a')}`,
};

/**
 * Authenticates `X-Api-Key`. The key is looked up by its SHA-256 (the key itself is never
 * stored or logged) and the stored hash compared in constant time. The key's prefix
 * decides the environment of everything the request touches.
 *
 * A keyed write also reads the answer stored under its Idempotency-Key in the same
 * statement, so that a replay costs one round trip in all (IdempotencyInterceptor).
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly db: Db,
    private readonly limiter: AuthFailureLimiter,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const header = request.headers['x-api-key'];
    if (header === undefined || header === '') {
      throw this.refuse(request, missingKey());
    }
    const key = Array.isArray(header) ? '' : header;
    const environment = environmentOf(key);
    // environmentOf matches the whole key format, so null also means malformed.
    if (!environment) throw this.refuse(request, invalidKey());

    const hash = hashApiKey(key);
    const idempotencyKey = isIdempotentRoute(context) ? validKeyOrNull(request) : null;
    const row = await this.db.one<{ merchant_id: string; key_hash: Buffer } & KeyRow>(
      idempotencyKey === null ? API_KEY_LOOKUP : API_KEY_LOOKUP_WITH_ANSWER,
      idempotencyKey === null ? [hash] : [hash, environment, idempotencyKey],
    );
    if (!row || !timingSafeEqual(row.key_hash, hash)) throw this.refuse(request, invalidKey());

    request.auth = { merchantId: row.merchant_id, environment };
    if (idempotencyKey !== null) request.prefetchedAnswer = { key: idempotencyKey, stored: toStoredKey(row) };
    addLogFields(request, { merchant_id: row.merchant_id, environment });
    return true;
  }

  private refuse(request: FastifyRequest, error: DomainError): DomainError {
    return this.limiter.refuse(request, error, 'api_key');
  }
}

function missingKey(): DomainError {
  return new DomainError('api_key_missing', 'Send your secret API key in the X-Api-Key header.', 'X-Api-Key');
}

function invalidKey(): DomainError {
  return new DomainError('api_key_invalid', 'The API key is not valid, or has been revoked.', 'X-Api-Key');
}
