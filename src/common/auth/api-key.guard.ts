import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { DataSource } from 'typeorm';
import { API_KEY_PATTERN, environmentOf, hashApiKey } from '../../merchants/api-key';
import { DomainError } from '../errors/domain-error';
import { addLogFields } from '../logging/request-logging';

/**
 * Authenticates `X-Api-Key`. The key is looked up by its SHA-256 (the key itself is never
 * stored or logged) and the stored hash compared in constant time. The key's prefix
 * decides the environment of everything the request touches.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(private readonly dataSource: DataSource) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const header = request.headers['x-api-key'];
    if (header === undefined || header === '') {
      throw new DomainError('api_key_missing', 'Send your secret API key in the X-Api-Key header.', 'X-Api-Key');
    }
    const key = Array.isArray(header) ? '' : header;
    const environment = environmentOf(key);
    if (!environment || !API_KEY_PATTERN.test(key)) throw invalidKey();

    const hash = hashApiKey(key);
    const rows: { merchant_id: string; key_hash: Buffer }[] = await this.dataSource.query(
      'SELECT merchant_id, key_hash FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL',
      [hash],
    );
    if (rows.length !== 1 || !timingSafeEqual(rows[0].key_hash, hash)) throw invalidKey();

    request.auth = { merchantId: rows[0].merchant_id, environment };
    addLogFields(request, { merchant_id: rows[0].merchant_id, environment });
    return true;
  }
}

function invalidKey(): DomainError {
  return new DomainError('api_key_invalid', 'The API key is not valid, or has been revoked.', 'X-Api-Key');
}
