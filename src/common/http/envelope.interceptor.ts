import { CallHandler, ExecutionContext, HttpStatus, Injectable, NestInterceptor } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { map, Observable } from 'rxjs';
import { ApiResponse, Page, WithStatus } from './api-response';

/**
 * Wraps what a controller returns in the success envelope, `{data, request_id}` (plus
 * `has_more` for pages), as a complete ApiResponse, so the idempotency layer stores
 * exactly what is sent.
 */
@Injectable()
export class EnvelopeInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<ApiResponse> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    // A POST creates (201) unless the controller says otherwise with WithStatus.
    const routeStatus = request.method === 'POST' ? HttpStatus.CREATED : HttpStatus.OK;
    return next.handle().pipe(map((result: unknown) => envelope(result, routeStatus, request.id)));
  }
}

function envelope(result: unknown, routeStatus: number, requestId: string): ApiResponse {
  if (result instanceof ApiResponse) return result;
  if (result instanceof Page) {
    return new ApiResponse(routeStatus, { data: result.data, has_more: result.hasMore, request_id: requestId });
  }
  if (result instanceof WithStatus) {
    return new ApiResponse(result.status, { data: result.data, request_id: requestId }, result.headers);
  }
  return new ApiResponse(routeStatus, { data: result, request_id: requestId });
}
