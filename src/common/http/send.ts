import type { FastifyReply } from 'fastify';
import { noteErrorCode } from '../logging/error-fields';
import { ApiResponse } from './api-response';

/** The one place a response goes on the wire: status, its own headers, JSON text. */
export function sendApiResponse(reply: FastifyReply, response: ApiResponse): FastifyReply {
  reply.code(response.status);
  noteErrorCode(reply.request, response);
  for (const [name, value] of Object.entries(response.headers)) reply.header(name, value);
  reply.type('application/json; charset=utf-8');
  return reply.send(response.json);
}
