import { applyDecorators, ExecutionContext, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiHeader } from '@nestjs/swagger';
import { IDEMPOTENCY_KEY_DOC } from './idempotency-key-header';

const IDEMPOTENT = 'kukopay:idempotent';

/**
 * Marks a write as safe to retry with an Idempotency-Key (docs/idempotency.md). The one
 * source of the policy: the interceptor and the API-key guard read this mark, and the
 * OpenAPI document gets the header from it. Every POST under /v1 carries it except the
 * webhook receiver and the admin API.
 */
export function Idempotent(): MethodDecorator {
  return applyDecorators(SetMetadata(IDEMPOTENT, true), ApiHeader(IDEMPOTENCY_KEY_DOC));
}

const reflector = new Reflector();

/** Whether the route handling this request is marked @Idempotent(). */
export function isIdempotentRoute(context: ExecutionContext): boolean {
  return reflector.get<boolean | undefined>(IDEMPOTENT, context.getHandler()) === true;
}
