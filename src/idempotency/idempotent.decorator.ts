import { applyDecorators, ExecutionContext, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiHeader } from '@nestjs/swagger';
import { ApiIdempotentResponses } from '../common/openapi/api-idempotent.decorator';
import { IDEMPOTENCY_KEY_DOC } from './idempotency-key-header';

const IDEMPOTENT = 'kukopay:idempotent';

/**
 * Marks a write as safe to retry with an Idempotency-Key (docs/idempotency.md). The one
 * source of the policy: the interceptor and the API-key guard read this mark, and the
 * OpenAPI document gets from it the header, its errors and the replay header. Every POST
 * under /v1 carries it except the webhook receiver and the admin API.
 */
export function Idempotent(): MethodDecorator {
  return applyDecorators(SetMetadata(IDEMPOTENT, true), ApiHeader(IDEMPOTENCY_KEY_DOC), ApiIdempotentResponses());
}

const reflector = new Reflector();

/** Whether the route handling this request is marked @Idempotent(). */
export function isIdempotentRoute(context: ExecutionContext): boolean {
  return reflector.get<boolean | undefined>(IDEMPOTENT, context.getHandler()) === true;
}
