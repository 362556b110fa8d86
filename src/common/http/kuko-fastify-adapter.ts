import { FastifyAdapter } from '@nestjs/platform-fastify';
import secureJsonParse from 'secure-json-parse';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import { DomainError } from '../errors/domain-error';
import { toErrorResponse } from '../errors/error-response';
import { refuseUnstorableJson } from '../validation/storable-json';
import { ApiResponse } from './api-response';
import { newRequestId, REQUEST_ID_HEADER } from './request-id';
import { sendApiResponse } from './send';

export const MAX_BODY_BYTES = 64 * 1024;
const WEBHOOK_PREFIX = '/v1/webhooks/';

declare module 'fastify' {
  interface FastifyRequest {
    /** The body exactly as received; webhook signatures are verified over these bytes. */
    rawBody?: Buffer;
  }
}

/**
 * Fastify, set up so that every answer is ours: request ids on every response, one JSON
 * body parser (with the raw bytes kept for webhooks), and ApiResponse values sent with
 * their own status, which Nest would otherwise overwrite with the route's default.
 */
export class KukoFastifyAdapter extends FastifyAdapter {
  constructor() {
    super({
      bodyLimit: MAX_BODY_BYTES,
      genReqId: (raw: IncomingMessage) => {
        const id = newRequestId();
        // pino-http reads the id from the raw request, so both logs and answers share it.
        (raw as { id?: string }).id = id;
        return id;
      },
      // Trailing slashes and double slashes name the same route.
      routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true },
      logger: false,
      // A URL Fastify cannot decode never reaches Nest; answer it in the envelope too.
      frameworkErrors: (_error: Error, request: FastifyRequest, reply: FastifyReply) => {
        reply.header(REQUEST_ID_HEADER, request.id);
        sendApiResponse(reply, toErrorResponse(new DomainError('route_not_found', 'The URL is malformed.'), request.id));
      },
    });
    const fastify = this.getInstance();
    fastify.addHook('onRequest', async (request, reply) => {
      reply.header(REQUEST_ID_HEADER, request.id);
    });
    fastify.removeAllContentTypeParsers();
    fastify.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
      try {
        done(null, parseJsonBody(request, body as Buffer));
      } catch (error) {
        done(error as Error, undefined);
      }
    });
  }

  override reply(response: FastifyReply, body: unknown, statusCode?: number) {
    if (body instanceof ApiResponse) return sendApiResponse(response, body);
    return super.reply(response, body, statusCode);
  }
}

function parseJsonBody(request: FastifyRequest, body: Buffer): unknown {
  request.rawBody = body;
  // Webhook bodies are parsed only after their signature has been checked.
  if (request.url.startsWith(WEBHOOK_PREFIX)) return undefined;
  // An absent body counts as {} (docs/idempotency.md); validation then names the missing fields.
  if (body.length === 0) return undefined;
  let parsed: unknown;
  try {
    // Keys such as __proto__ are refused rather than silently dropped.
    parsed = secureJsonParse.parse(body.toString('utf8'), { protoAction: 'error', constructorAction: 'error' });
  } catch (error) {
    throw new DomainError('invalid_json', `The request body is not valid JSON: ${(error as Error).message}`);
  }
  const refusal = refuseUnstorableJson(parsed);
  if (refusal) throw refusal;
  return parsed;
}
