import { applyDecorators, CanActivate, ExecutionContext, Injectable, UseGuards } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { DomainError } from '../errors/domain-error';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { isJsonObject } from '../validation/storable-json';

/**
 * A write whose parameters are all in its path. A body, if one is sent, must be `{}`: a
 * field sent anyway is refused as unknown (docs/errors.md, parameter_unknown), never silently ignored, as the
 * validation pipe refuses one on every write that takes a body.
 */
@Injectable()
class NoBodyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const body: unknown = context.switchToHttp().getRequest<FastifyRequest>().body;
    if (body === undefined) return true;
    if (!isJsonObject(body)) {
      throw new DomainError('parameter_invalid', 'This request takes no body; send none, or {}.', null);
    }
    const [unknown] = Object.keys(body);
    if (unknown !== undefined)
      throw new DomainError('parameter_unknown', `Received unknown parameter: ${unknown}`, unknown);
    return true;
  }
}

export function TakesNoBody(): MethodDecorator {
  return applyDecorators(UseGuards(NoBodyGuard), ApiErrors('parameter_unknown'));
}
