import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { Connections } from '../http/connections';
import { levelOf } from './error-fields';
import { urlRedactor } from './loggable-url';

/** Fields a request gathers as it is served (merchant, idempotency outcome …). */
export type RequestLogFields = Record<string, string | number | boolean | null>;

declare module 'fastify' {
  interface FastifyRequest {
    logFields?: RequestLogFields;
  }
}

export function addLogFields(request: FastifyRequest, fields: RequestLogFields): void {
  Object.assign((request.logFields ??= {}), fields);
}

/**
 * One structured line per request when its response is finished: request id, route,
 * status, duration and what the request gathered. Headers and bodies are not logged, nor
 * the values of undeclared query parameters, nor a credential anywhere in the URL
 * (urlRedactor; `secrets`: the configured admin and metrics tokens), so API keys, tokens
 * and webhook signatures cannot leak.
 */
export function logRequests(
  fastify: FastifyInstance,
  connections: Connections,
  logger: Logger,
  secrets: readonly string[] = [],
): void {
  const logged = urlRedactor(secrets);
  // Requests the HTTP parser refused: no route and no duration, but the answer all the same.
  connections.onRawAnswer(({ requestId, method, url, status, error }) =>
    logger[levelOf(status, { error })](
      { request_id: requestId, method, url: url === null ? null : logged(url), status, error },
      'request completed',
    ),
  );
  fastify.addHook('onResponse', async (request, reply) => {
    const status = reply.statusCode;
    logger[levelOf(status, request.logFields)](
      {
        request_id: request.id,
        method: request.method,
        url: logged(request.url),
        status,
        duration_ms: Math.round(reply.elapsedTime * 10) / 10,
        ...request.logFields,
      },
      'request completed',
    );
  });
}
