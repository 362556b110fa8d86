import {
  applyDecorators,
  CallHandler,
  ExecutionContext,
  Injectable,
  NestInterceptor,
  UseInterceptors,
} from '@nestjs/common';
import { ApiBody } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import type { Observable } from 'rxjs';
import { DomainError } from '../errors/domain-error';
import { unknownParameter } from '../errors/unknown-parameter';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { isJsonObject } from '../validation/storable-json';

/**
 * A write whose parameters are all in its path. A body, if one is sent, must be `{}`: a
 * field sent anyway is refused as unknown (docs/errors.md, parameter_unknown), never
 * silently ignored, as the validation pipe refuses one on every write that takes a body.
 *
 * An interceptor, not a guard: a method's interceptors run inside the global ones, so the
 * refusal is made within the Idempotency-Key layer, stored and replayed like any other
 * validation error (docs/idempotency.md). A guard would refuse before that layer, and a
 * retry of the same key without the body would then execute.
 */
@Injectable()
class NoBodyInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const body: unknown = context.switchToHttp().getRequest<FastifyRequest>().body;
    if (body === undefined) return next.handle();
    if (!isJsonObject(body)) {
      throw new DomainError('parameter_invalid', 'This request takes no body; send none, or {}.', null);
    }
    const [unknown] = Object.keys(body);
    if (unknown !== undefined) throw unknownParameter(unknown);
    return next.handle();
  }
}

/**
 * The document says what the server takes: no body, or an empty object (so a validating
 * proxy lets `{}` through, as the server does).
 */
const NO_BODY = ApiBody({
  required: false,
  description: 'None, or an empty object',
  schema: { type: 'object', additionalProperties: false, maxProperties: 0 },
});

export function TakesNoBody(): MethodDecorator {
  return applyDecorators(UseInterceptors(NoBodyInterceptor), NO_BODY, ApiErrors('parameter_unknown'));
}
