import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { routeNotFound } from '../errors/error-response';
import { headerLines } from '../http/header-lines';
import { AuthFailureLimiter } from './auth-failure-limiter';
import { BearerToken } from './bearer-token';

/** Where the admin API's routes live. */
export const ADMIN_ROUTE_PREFIX = '/v1/admin/';

/**
 * `Authorization: Bearer $ADMIN_TOKEN`. With no token configured the admin API does not
 * exist (404), so an unconfigured deployment exposes nothing. The HTTP adapter answers
 * such a request already, before its body is read (app.factory.ts), as for any unknown
 * URL; the guard's own refusal keeps that true wherever the routes are mounted.
 */
@Injectable()
export class AdminGuard implements CanActivate {
  private readonly token: BearerToken | null;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly limiter: AuthFailureLimiter,
  ) {
    this.token = config.adminToken ? new BearerToken(config.adminToken, 'admin token') : null;
  }

  canActivate(context: ExecutionContext): boolean {
    if (!this.token) throw routeNotFound();
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const refusal = this.token.refusal(headerLines(request.raw.rawHeaders, 'authorization'));
    if (refusal) throw this.limiter.refuse(request, refusal, 'admin_token');
    return true;
  }
}
