import { FastifyAdapter } from '@nestjs/platform-fastify';
import secureJsonParse from 'secure-json-parse';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { DomainError } from '../errors/domain-error';
import { toErrorResponse } from '../errors/error-response';
import { refuseUnstorableJson } from '../validation/storable-json';
import { ApiResponse } from './api-response';
import { newRequestId, REQUEST_ID_HEADER } from './request-id';
import { sendApiResponse } from './send';

export const MAX_BODY_BYTES = 64 * 1024;
/** Request headers must all arrive within this (docs/operations.md). */
const HEADERS_TIMEOUT_MS = 10_000;

export interface AdapterOptions {
  /** The whole request must arrive within this, or the connection is answered 408 and closed. */
  requestTimeoutMs: number;
}
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
  constructor({ requestTimeoutMs }: AdapterOptions) {
    super({
      bodyLimit: MAX_BODY_BYTES,
      // Slow or trickling clients are cut off: headers within 10 s, everything within the
      // request timeout, checked every second rather than Node's default 30 s.
      requestTimeout: requestTimeoutMs,
      http: {
        headersTimeout: Math.min(HEADERS_TIMEOUT_MS, requestTimeoutMs),
        requestTimeout: requestTimeoutMs,
        connectionsCheckingInterval: 1000,
      },
      clientErrorHandler: answerClientError,
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
        sendApiResponse(
          reply,
          toErrorResponse(new DomainError('route_not_found', 'The URL is malformed.'), request.id),
        );
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

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** A body's text; bytes that are not UTF-8 are refused rather than replaced by U+FFFD. */
export function utf8Text(body: Buffer, what: string): string {
  try {
    return UTF8.decode(body);
  } catch {
    throw new DomainError('invalid_json', `${what} is not valid UTF-8.`);
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
    parsed = secureJsonParse.parse(utf8Text(body, 'The request body'), {
      protoAction: 'error',
      constructorAction: 'error',
    });
  } catch (error) {
    if (error instanceof DomainError) throw error;
    throw new DomainError('invalid_json', `The request body is not valid JSON: ${(error as Error).message}`);
  }
  const refusal = refuseUnstorableJson(parsed);
  if (refusal) throw refusal;
  return parsed;
}

/**
 * Node's HTTP parser refused the request (bad bytes in a header, headers over 16 KiB,
 * conflicting lengths) or it did not arrive in time: nothing was routed, so nothing in
 * Fastify or Nest answers it. It still gets the error envelope and a request id, then
 * the connection is closed, as it cannot be trusted for a next request.
 */
function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || !socket.writable) return;
  const refusal =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new DomainError('headers_too_large', 'The request headers are larger than 16 KiB.')
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' || error.code === 'HPE_HEADERS_TIMEOUT'
        ? new DomainError('request_timeout', 'The request did not arrive in time; the connection is closed.')
        : new DomainError('malformed_request', 'The request is not valid HTTP/1.1; the connection is closed.');
  const requestId = newRequestId();
  const response = toErrorResponse(refusal, requestId);
  const body = Buffer.from(response.json);
  socket.end(
    `HTTP/1.1 ${response.status} ${STATUS_CODES[response.status]}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${body.length}\r\n` +
      `${REQUEST_ID_HEADER}: ${requestId}\r\n` +
      'Connection: close\r\n\r\n' +
      body.toString(),
  );
}
