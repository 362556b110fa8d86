import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { Environment } from '../../domain/environment';

/** Who is calling: set by ApiKeyGuard, read by controllers and the idempotency layer. */
export interface RequestAuth {
  merchantId: string;
  environment: Environment;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth?: RequestAuth;
  }
}

export function authOf(request: FastifyRequest): RequestAuth {
  if (!request.auth) throw new Error('ApiKeyGuard did not run for this route');
  return request.auth;
}

export const Auth = createParamDecorator((_: unknown, context: ExecutionContext): RequestAuth =>
  authOf(context.switchToHttp().getRequest<FastifyRequest>()),
);
