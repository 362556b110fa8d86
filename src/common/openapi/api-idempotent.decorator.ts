import { ApiExtraModels } from '@nestjs/swagger';
import { addErrorCodes, declare } from './declared-responses';
import { ErrorSchema } from './error.schema';

/**
 * The responses every @Idempotent() route can give because of its Idempotency-Key
 * (docs/idempotency.md): 400 idempotency_key_invalid / idempotency_error, 409
 * idempotency_in_progress with Retry-After, and `Idempotent-Replayed: true` on every
 * answer the key stores (2xx and the request's own 4xx).
 */
export function ApiIdempotentResponses(): MethodDecorator {
  return (target, _key, descriptor) => {
    declare(descriptor.value as object, (declared) => {
      declared.idempotent = true;
      addErrorCodes(declared, ['idempotency_key_invalid', 'idempotency_error', 'idempotency_in_progress']);
    });
    ApiExtraModels(ErrorSchema)(target.constructor);
    return descriptor;
  };
}
