import {
  applyDecorators,
  CallHandler,
  ExecutionContext,
  Injectable,
  NestInterceptor,
  UseInterceptors,
} from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { Observable } from 'rxjs';
import { unknownParameter } from '../errors/unknown-parameter';
import { ApiErrors } from '../openapi/api-errors.decorator';

/**
 * A list answered whole, on one page, that takes no query parameters. Unlike a create or
 * a retrieve, which ignore a query string (docs/errors.md), a list is where a client
 * sends `limit` or `starting_after`: answering every item as if it had been honoured
 * would mislead it, so any query parameter is refused as unknown.
 */
@Injectable()
class WholeListInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const query = context.switchToHttp().getRequest<FastifyRequest>().query;
    const [name] = typeof query === 'object' && query !== null ? Object.keys(query) : [];
    if (name !== undefined) {
      throw unknownParameter(name, 'this list takes none: every item is on one page');
    }
    return next.handle();
  }
}

export function WholeList(): MethodDecorator {
  return applyDecorators(UseInterceptors(WholeListInterceptor), ApiErrors('parameter_unknown'));
}
