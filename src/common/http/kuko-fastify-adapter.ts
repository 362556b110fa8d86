import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { maxHeaderSize, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { DomainError } from '../errors/domain-error';
import { notJsonBody, routeNotFound, toErrorResponse } from '../errors/error-response';
import { parseJsonText } from '../validation/json-text';
import { ApiResponse } from './api-response';
import { Connections } from './connections';
import { newRequestId, REQUEST_ID_HEADER } from './request-id';
import {
  asksToUpgrade,
  framesBody,
  framingRefusal,
  refuseCodings,
  refuseSecondContentType,
  settleContentType,
} from './request-headers';
import { sendApiResponse } from './send';

export const MAX_BODY_BYTES = 64 * 1024;
/** Request headers must all arrive within this (docs/operations.md). */
const HEADERS_TIMEOUT_MS = 10_000;

export interface AdapterOptions {
  /** The whole request must arrive within this, or the connection is answered 408 and closed. */
  requestTimeoutMs: number;
  /**
   * Routes under these prefixes answer exactly as a URL that matches no route: the admin
   * API without ADMIN_TOKEN (docs/errors.md), so that nothing about the request, body
   * included, tells it apart from an unknown one.
   */
  absentRoutePrefixes?: readonly string[];
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
  /** What the HTTP server answers below Fastify (parser refusals, draining). */
  readonly connections: Connections;
  /** Settles once the HTTP server has closed, every connection ended (beforeClose starts it). */
  private serverClosed: Promise<void> | null = null;

  constructor({ requestTimeoutMs, absentRoutePrefixes = [] }: AdapterOptions) {
    // The parser's refusals need the connections, which exist only once the server does.
    const late: { connections?: Connections } = {};
    super({
      bodyLimit: MAX_BODY_BYTES,
      // Slow or trickling clients are cut off: headers within 10 s, everything within the
      // request timeout, checked every second rather than Node's default 30 s.
      requestTimeout: requestTimeoutMs,
      http: {
        headersTimeout: Math.min(HEADERS_TIMEOUT_MS, requestTimeoutMs),
        requestTimeout: requestTimeoutMs,
        connectionsCheckingInterval: 1000,
        // Node would answer a bare 400 itself; the onRequest hook answers in the envelope.
        requireHostHeader: false,
      },
      clientErrorHandler: (error: Error & { code?: string }, socket: Socket) => answerClientError(late, error, socket),
      genReqId: (raw: IncomingMessage) => {
        const id = newRequestId();
        // pino-http reads the id from the raw request, so both logs and answers share it.
        (raw as { id?: string }).id = id;
        return id;
      },
      // While draining, requests are still served (the database is up until the HTTP server
      // has drained), each on a connection closed after its answer (Connections.drain);
      // Fastify's own 503 would have no envelope and no request id.
      return503OnClosing: false,
      // Trailing slashes and double slashes name the same route. A parameter may be as long
      // as the request line (the parser refuses headers over 16 KiB), so every route is
      // matched and answers as it always does: authentication first, then an id too long
      // for any object is resource_missing.
      routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true, maxParamLength: maxHeaderSize },
      // A fragment is the client's own (RFC 9110 §4.2.4) and never meant for the server;
      // one sent anyway is dropped before routing, where the router would read it as a
      // query string (`/v1/orders#x` as `?x`).
      rewriteUrl: (raw: IncomingMessage) => withoutFragment(raw.url ?? '/'),
      logger: false,
      // A URL Fastify cannot route (a malformed percent-encoding in its path, an absolute
      // URL whose host or port cannot be read) never reaches Nest; answer it in the
      // envelope too. Fastify's request here has none of the hooks that log and count, so
      // the answer is reported to their listeners the way the parser's refusals are.
      frameworkErrors: (error: Error & { code?: string }, request: FastifyRequest, reply: FastifyReply) => {
        reply.header(REQUEST_ID_HEADER, request.id);
        const refusal = new DomainError(
          'malformed_request',
          error.code === 'FST_ERR_BAD_URL' ? unreadableUrlMessage(request.url) : 'The URL cannot be routed.',
        );
        const response = toErrorResponse(refusal, request.id);
        sendApiResponse(reply, response);
        late.connections?.report({
          requestId: request.id,
          method: request.method,
          url: request.url,
          status: response.status,
          error: refusal.code,
        });
      },
    });
    const fastify = this.getInstance();
    this.connections = late.connections = new Connections(fastify.server);
    // Headers are bounded by size (16 KiB), not by count: Node would drop those past 2000.
    fastify.server.maxHeadersCount = 0;
    // A client that half-closes its side once its request is sent (shutdown(SHUT_WR), as
    // `nc -N` does) still gets the answer: Node would abort the request and close at once,
    // and the write would commit unanswered. The connection ends after that answer. (The
    // switch is Node's own, read by its HTTP server since 0.x, though not in its types.)
    (fastify.server as { httpAllowHalfOpen?: boolean }).httpAllowHalfOpen = true;
    // Also here, not only in beforeClose: Fastify may be closed without Nest (a test of the
    // adapter alone); drain() twice changes nothing more.
    fastify.addHook('preClose', (done) => {
      this.connections.drain();
      done();
    });
    fastify.addHook('onRequest', async (request, reply) => {
      reply.header(REQUEST_ID_HEADER, request.id);
      // Pipelined behind an answer that closed the connection, or on a connection reset
      // meanwhile: no one would read its answer, and the client, which never got one,
      // sends the request again (RFC 9112 §9.3.2). Not served, with or without a body.
      if (!(await this.connections.inTurn(request.raw))) return reply.hijack();
      const framing = framingRefusal(request.raw);
      if (framing) {
        reply.header('Connection', 'close');
        return sendApiResponse(reply, toErrorResponse(framing, request.id));
      }
      if (asksToUpgrade(request.raw)) reply.header('Connection', 'close');
      // A URL that matches no route (or a route that is absent here, absentRoutePrefixes)
      // is answered route_not_found before its body is read, whatever the body: no
      // invalid_json, 415 or 413 for a request that is wrong anyway, and no 100 Continue.
      // The connection closes after it if a body was on its way.
      if (request.is404 || absentRoutePrefixes.some((prefix) => request.routeOptions.url?.startsWith(prefix))) {
        if (framesBody(request.raw)) reply.header('Connection', 'close');
        return sendApiResponse(reply, toErrorResponse(routeNotFound(), request.id));
      }
      // `Expect: 100-continue` asks whether to send the body (RFC 9110 §10.1.1). Routed,
      // with one Host, the answer is yes, except for a Content-Length over the limit:
      // Fastify answers that 413 without reading, so the client learns it before uploading
      // anything rather than sending a body the server then cuts off. A refusal above is
      // sent without 100 too. The API key is checked with the request, after the body.
      const tooLarge = Number(request.headers['content-length']) > MAX_BODY_BYTES;
      if (this.connections.expectsContinue(request.raw) && !tooLarge) reply.raw.writeContinue();
      // Before Fastify reads it: it would refuse an unreadable one 415, body or not.
      settleContentType(request.raw);
    });
    // A request already refused (its body timed out, then arrived after all) is never
    // served: its client was told nothing was done.
    fastify.addHook('preValidation', (request, reply, done) => {
      if (this.connections.wasRefused(request.raw)) reply.hijack();
      done();
    });
    fastify.removeAllContentTypeParsers();
    fastify.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
      try {
        // An empty body is no body, whatever type or coding it names.
        if ((body as Buffer).length > 0) {
          refuseSecondContentType(request.raw);
          refuseCodings(request.raw);
        }
        done(null, parseJsonBody(request, body as Buffer));
      } catch (error) {
        done(error as Error, undefined);
      }
    });
    // Any other content type, or none with a body framed anyway: an empty body is no body
    // (`curl -d ''` labels one a form, some clients an empty POST text/plain, node:http
    // sends `req.end()` after `req.write('')` chunked), as for a write sent with nothing at
    // all. Read first, within the body limit, as only reading tells a chunked one apart.
    fastify.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body, done) => {
      if ((body as Buffer).length === 0) done(null, undefined);
      else done(notJsonBody(), undefined);
    });
  }

  /**
   * Nest's first step of app.close(), before the shutdown hooks, which wait for the
   * notification attempts and a purge in flight (up to NOTIFY_TIMEOUT_MS): the listener
   * closes and the connections drain now, rather than once those hooks end, so a stopping
   * instance takes no new request meanwhile and its port is free for its successor. The
   * rest of the close waits for the connections to end.
   */
  override beforeClose(): void {
    super.beforeClose();
    this.connections.drain();
    const server = this.getInstance().server;
    // Called again by Fastify's close, which then finds it closed (ERR_SERVER_NOT_RUNNING,
    // which it takes as closed) and no longer waits: close() waits for this instead.
    this.serverClosed ??= new Promise((resolve) => server.close(() => resolve()));
  }

  override async close(): Promise<void> {
    await super.close();
    await this.serverClosed;
  }

  override reply(response: FastifyReply, body: unknown, statusCode?: number) {
    if (body instanceof ApiResponse) return sendApiResponse(response, body);
    return super.reply(response, body, statusCode);
  }
}

/**
 * Why the router could not read a URL: in origin form (`/v1/…`) only a malformed
 * percent-encoding stops it; in absolute form (`http://host:port/v1/…`, as sent to a forward
 * proxy) the host and port are read too.
 */
function unreadableUrlMessage(url: string): string {
  return /^https?:\/\//i.test(url)
    ? 'The absolute URL cannot be read: check its host, its port and any percent-encoding in its path.'
    : 'The URL has a malformed percent-encoding.';
}

function withoutFragment(url: string): string {
  const hash = url.indexOf('#');
  return hash === -1 ? url : url.slice(0, hash);
}

// A leading byte order mark is kept in the text: the JSON parser ignores one
// (docs/errors.md), so a second one is refused as not JSON rather than dropped as well.
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

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
  // Webhook bodies are parsed only after their signature has been checked. By the route
  // matched, not the URL as written: `/v1/%77ebhooks/…` is the same route.
  if (request.routeOptions.url?.startsWith(WEBHOOK_PREFIX)) return undefined;
  // An absent body counts as {} (docs/idempotency.md); validation then names the missing fields.
  if (body.length === 0) return undefined;
  try {
    return parseJsonText(utf8Text(body, 'The request body'), { laterForStrings: true });
  } catch (error) {
    if (error instanceof DomainError) throw error;
    throw new DomainError('invalid_json', `The request body is not valid JSON: ${(error as Error).message}`);
  }
}

/**
 * Node's HTTP parser refused the request (bad bytes in a header, headers over 16 KiB,
 * conflicting lengths) or it did not arrive in time: nothing was routed, so nothing in
 * Fastify or Nest answers it. It still gets the error envelope and a request id, then
 * the connection is closed, as it cannot be trusted for a next request.
 */
function answerClientError(late: { connections?: Connections }, error: Error & { code?: string }, socket: Socket) {
  if (error.code === 'ECONNRESET') return;
  const refusal =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new DomainError('headers_too_large', 'The request headers are larger than 16 KiB.')
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' || error.code === 'HPE_HEADERS_TIMEOUT'
        ? new DomainError('request_timeout', 'The request did not arrive in time; the connection is closed.')
        : new DomainError('malformed_request', 'The request is not valid HTTP/1.1; the connection is closed.');
  late.connections!.refuse(socket, refusal);
}
