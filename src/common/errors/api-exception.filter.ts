import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { loadShedCause } from '../../database/pg-errors';
import { sendApiResponse } from '../http/send';
import { addLogFields } from '../logging/request-logging';
import { DomainError } from './domain-error';
import { toErrorResponse } from './error-response';

/**
 * The one exception filter: every error, from routing and body parsing to services,
 * leaves as the error envelope of docs/errors.md. Server-side faults are logged with their cause; the
 * client only ever sees the generic message.
 */
@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger(ApiExceptionFilter.name);

  catch(exception: unknown, host: ArgumentsHost): void {
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const response = toErrorResponse(exception, request.id);
    // A DomainError is an answer we chose (503 resource_not_ready …): the request line says
    // it. So is load shed as designed (a hot row's lock, no write slot or connection): its
    // cause on the request line, at warn. Anything else that ends in a 5xx is a fault,
    // logged with its stack.
    const shed = loadShedCause(exception);
    if (shed) addLogFields(request, { database_busy: shed });
    else if (response.status >= 500 && !(exception instanceof DomainError)) {
      this.logger.error({ msg: 'request failed', err: exception, request_id: request.id });
    }
    if (reply.sent) return;
    sendApiResponse(reply, response);
  }
}
