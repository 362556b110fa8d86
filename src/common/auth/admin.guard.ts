import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { DomainError } from '../errors/domain-error';
import { sha256 } from '../hash';
import { AuthFailureLimiter } from './auth-failure-limiter';

/**
 * `Authorization: Bearer $ADMIN_TOKEN`. With no token configured the admin API does not
 * exist (404), so an unconfigured deployment exposes nothing.
 */
@Injectable()
export class AdminGuard implements CanActivate {
  private readonly expected: Buffer | null;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly limiter: AuthFailureLimiter,
  ) {
    this.expected = config.adminToken ? sha256(config.adminToken) : null;
  }

  canActivate(context: ExecutionContext): boolean {
    if (!this.expected) throw new DomainError('route_not_found', 'No route matches this method and path.');
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const header = request.headers.authorization;
    if (!header) {
      const missing = new DomainError(
        'api_key_missing',
        'Send the admin token as Authorization: Bearer <token>.',
        'Authorization',
      );
      throw this.limiter.refuse(request, missing, 'admin_token');
    }
    const match = /^Bearer (.+)$/.exec(header);
    // Digests have one length, so the comparison takes the same time whatever was sent.
    if (!match || !timingSafeEqual(sha256(match[1]), this.expected)) {
      const invalid = new DomainError('api_key_invalid', 'The admin token is not valid.', 'Authorization');
      throw this.limiter.refuse(request, invalid, 'admin_token');
    }
    return true;
  }
}
