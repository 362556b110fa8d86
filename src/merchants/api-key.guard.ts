import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { AuthFailureLimiter } from '../common/auth/auth-failure-limiter';
import { DomainError } from '../common/errors/domain-error';
import { headerLines } from '../common/http/header-lines';
import { addLogFields } from '../common/logging/request-logging';
import { isIdempotentRoute } from '../idempotency/idempotent.decorator';
import { validKeyOrNull } from '../idempotency/idempotency-scope';
import { ApiKeyAuthenticator } from './api-key-authenticator';

/**
 * Authenticates `X-Api-Key` (ApiKeyAuthenticator) and records who is calling on the
 * request; refusals go through the per-address failure limiter. On an @Idempotent()
 * route it also hands the interceptor the answer stored under the request's
 * Idempotency-Key, read in the same round trip.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly authenticator: ApiKeyAuthenticator,
    private readonly limiter: AuthFailureLimiter,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const idempotencyKey = isIdempotentRoute(context) ? validKeyOrNull(request) : null;
    const { merchantId, environment, stored } = await this.authenticator
      .authenticate(headerLines(request.raw.rawHeaders, 'x-api-key'), idempotencyKey)
      .catch((error: unknown) => {
        // A refused key counts towards the address's limit (docs/operations.md); an
        // outage does not.
        throw error instanceof DomainError ? this.limiter.refuse(request, error, 'api_key') : error;
      });
    request.auth = { merchantId, environment };
    if (idempotencyKey !== null) request.prefetchedAnswer = { key: idempotencyKey, stored };
    addLogFields(request, { merchant_id: merchantId, environment });
    return true;
  }
}
