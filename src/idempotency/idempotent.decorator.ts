import { applyDecorators, ExecutionContext, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiHeader } from '@nestjs/swagger';
import { ApiIdempotentResponses } from '../common/openapi/api-idempotent.decorator';
import { IDEMPOTENCY_KEY_DOC } from './idempotency-key-header';

const IDEMPOTENT = 'kukopay:idempotent';

export interface IdempotentOptions {
  /**
   * The answer shows a secret (a rolled notification secret): it is stored sealed under
   * ENCRYPTION_KEY, as the secret itself is, and opened to be replayed.
   */
  answerHoldsSecret?: boolean;
}

/**
 * Marks a write as safe to retry with an Idempotency-Key (docs/idempotency.md). The one
 * source of the policy: the interceptor and the API-key guard read this mark, and the
 * OpenAPI document gets from it the header, its errors and the replay header. Every POST
 * under /v1 carries it except the webhook receiver and the admin API.
 */
export function Idempotent(options: IdempotentOptions = {}): MethodDecorator {
  return applyDecorators(SetMetadata(IDEMPOTENT, options), ApiHeader(IDEMPOTENCY_KEY_DOC), ApiIdempotentResponses());
}

const reflector = new Reflector();

/** The options of the route handling this request, or null when it is not marked @Idempotent(). */
export function idempotentOptions(context: ExecutionContext): IdempotentOptions | null {
  return reflector.get<IdempotentOptions | undefined>(IDEMPOTENT, context.getHandler()) ?? null;
}

/** Whether the route handling this request is marked @Idempotent(). */
export function isIdempotentRoute(context: ExecutionContext): boolean {
  return idempotentOptions(context) !== null;
}
