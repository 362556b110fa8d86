import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { DomainError } from '../errors/domain-error';
import { routeNotFound, toErrorResponse } from '../errors/error-response';
import { newRequestId, REQUEST_ID_HEADER } from './request-id';

/** An answer written straight to a connection, for a request Fastify could not finish. */
export interface RawAnswer {
  requestId: string;
  /** The request's method and URL when the parser read them, else null. */
  method: string | null;
  url: string | null;
  status: number;
  error: string;
}

/** How long a connection we closed may wait for the client to close its side. */
const HALF_OPEN_MS = 5000;

/** One connection: the answers it still owes, in order, and the refusal that ends it. */
interface Connection {
  socket: Duplex;
  owing: Map<IncomingMessage, ServerResponse>;
  refusal: { text: string; answer: RawAnswer } | null;
  ended: boolean;
  /** Settles when the socket closes; requests waiting their turn share it. */
  gone: Promise<void>;
}

/**
 * What the HTTP server does below Fastify, on each connection:
 *
 * - Pipelined requests are served one at a time, in order (inTurn).
 * - Requests the parser refuses still get the error envelope with a request id, then the
 *   connection is closed. When answers to earlier requests on the connection are still
 *   owed (pipelining), the refusal waits behind them, so that a client never reads it as
 *   the answer to a request that was served. A refused request is never served, even if
 *   the rest of its body arrives afterwards.
 * - Requests that never reach the router (CONNECT, an `Expect` other than 100-continue)
 *   are routed like any other, or answered in the envelope; `Expect: 100-continue` is
 *   routed without Node's automatic 100 Continue.
 * - Once the server is draining (SIGTERM), every connection is closed as soon as it owes
 *   no answer (answers in flight say `Connection: close`), idle or half-sent ones at once,
 *   so that no client can hold the shutdown until its deadline. An answer in flight is
 *   written whole first, however slowly its client reads (within the shutdown deadline).
 * - A connection we close is destroyed if the client keeps its side open, so that it can
 *   hold neither a file descriptor nor the shutdown.
 *
 * Raw answers are reported to the listeners (the request log, the metrics) when sent.
 */
export class Connections {
  private readonly connections = new WeakMap<Duplex, Connection>();
  /** Connections still open, for drain(); each leaves when its socket closes. */
  private readonly live = new Set<Connection>();
  /** Requests answered with a refusal: they must not be served. */
  private readonly refused = new WeakSet<IncomingMessage>();
  /** HTTP/1.1 requests with `Expect: 100-continue`, as Node recognised them. */
  private readonly awaitingContinue = new WeakSet<IncomingMessage>();
  private readonly listeners: ((answer: RawAnswer) => void)[] = [];
  private draining = false;

  constructor(server: Server) {
    // server.close() (Fastify's too) calls this to destroy every connection with no request
    // in progress. Node counts an answer as done once it is handed over, even while most of
    // it still waits to be written to a slow reader, and would cut it short: a connection
    // that still owes an answer is ended once it is sent instead (track), and the others
    // are ended here, as drain() does.
    server.closeIdleConnections = () => {
      for (const connection of this.live) if (connection.owing.size === 0) this.end(connection);
    };
    server.on('connection', (socket: Duplex) => {
      const connection = this.connectionOf(socket);
      if (this.draining) this.end(connection);
    });
    server.prependListener('request', (request: IncomingMessage, response: ServerResponse) =>
      this.track(request, response),
    );
    // RFC 9110 lets a server ignore an expectation it does not know; Node would answer a
    // bare 417 otherwise.
    server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) =>
      server.emit('request', request, response),
    );
    // Node would say 100 Continue before anything has looked at the request; it is said
    // once the request is routed instead (KukoFastifyAdapter's onRequest hook).
    server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
      this.awaitingContinue.add(request);
      server.emit('request', request, response);
    });
    server.on('connect', (request: IncomingMessage, socket: Duplex) => {
      // Node hands the socket over without its own error handler: a reset must not crash.
      socket.on('error', () => socket.destroy());
      this.refuse(socket, routeNotFound(), request);
    });
  }

  onRawAnswer(listener: (answer: RawAnswer) => void): void {
    this.listeners.push(listener);
  }

  /**
   * Reports an answer sent outside Fastify's request hooks (Fastify's own refusal of a URL
   * it cannot route), so that it is logged and counted like every other.
   */
  report(answer: RawAnswer): void {
    for (const listener of this.listeners) listener(answer);
  }

  /** Whether the client waits for 100 Continue before it sends the request's body. */
  expectsContinue(request: IncomingMessage): boolean {
    return this.awaitingContinue.has(request);
  }

  /**
   * Resolves once every earlier request on the request's connection has been answered:
   * true if the request may then be served, false if its connection is gone or closing
   * (the answer before it said `Connection: close`, the server is draining, the client
   * reset it), so that no one would read its answer. Node reads pipelined requests as they
   * arrive and would serve them side by side, their answers merely sent in order; RFC 9112
   * §9.3.2 allows that for safe methods only. A client that pipelines a write and then a
   * read of it, or a payment and then a refund of it, must meet its own write: each
   * connection is served one request at a time.
   */
  async inTurn(request: IncomingMessage): Promise<boolean> {
    const connection = this.connections.get(request.socket);
    if (!connection) return true;
    // Answers are sent in order, so the one just before it is the last to wait for: a
    // wait per request, however deep the pipeline.
    let previous: ServerResponse | null = null;
    for (const [each, response] of connection.owing) {
      if (each === request) break;
      previous = response;
    }
    if (previous) await Promise.race([closed(previous), connection.gone]);
    // Left out of `owing` when the socket closed; not writable once an answer ended it.
    return connection.owing.has(request) && connection.socket.writable;
  }

  /** Whether the request was answered with a refusal (the rest of its body came too late). */
  wasRefused(request: IncomingMessage): boolean {
    return this.refused.has(request);
  }

  /**
   * From now on, each connection is closed once it owes no answer, and says so. A request
   * whose body is still arriving is refused now: Node no longer times requests out once
   * the server is closing, so it could hold the shutdown until its deadline.
   */
  drain(): void {
    this.draining = true;
    for (const connection of this.live) {
      const arriving = [...connection.owing.keys()].find((request) => !request.complete);
      if (arriving) {
        const refusal = new DomainError(
          'request_timeout',
          'The server is shutting down and the request had not arrived whole; nothing was done.',
        );
        this.refuse(connection.socket, refusal, arriving);
      }
      if (connection.owing.size === 0) this.end(connection);
      for (const response of connection.owing.values()) closeAfter(response);
    }
  }

  /**
   * Answers `refusal` on the connection and closes it, after the answers it still owes to
   * earlier requests. The refused request (`request`, or one whose body stopped arriving:
   * a bad chunk, a timeout) gets no other answer and takes its id from it. The parser
   * reports again for any later bytes; the first refusal stands.
   */
  refuse(socket: Duplex, refusal: DomainError, request?: IncomingMessage): void {
    const connection = this.connectionOf(socket);
    if (!socket.writable || connection.refusal !== null) return;
    const refused = request ?? [...connection.owing.keys()].find((each) => !each.complete);
    if (refused) {
      connection.owing.delete(refused);
      this.refused.add(refused);
    }
    const requestId = (refused as { id?: string } | undefined)?.id ?? newRequestId();
    const response = toErrorResponse(refusal, requestId);
    const body = response.json;
    connection.refusal = {
      text:
        `HTTP/1.1 ${response.status} ${STATUS_CODES[response.status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `${REQUEST_ID_HEADER}: ${requestId}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
      answer: {
        requestId,
        method: refused?.method ?? null,
        url: refused?.url ?? null,
        status: response.status,
        error: refusal.code,
      },
    };
    if (connection.owing.size === 0) this.end(connection);
  }

  private track(request: IncomingMessage, response: ServerResponse): void {
    const connection = this.connectionOf(request.socket);
    // After a refusal the connection is closing (RFC 9112): a request sent behind it is
    // never served.
    if (connection.refusal !== null || connection.ended) {
      this.refused.add(request);
      return;
    }
    connection.owing.set(request, response);
    if (this.draining) closeAfter(response);
    response.once('close', () => {
      connection.owing.delete(request);
      if (connection.owing.size > 0) return;
      if (connection.refusal !== null || this.draining) this.end(connection);
    });
  }

  private connectionOf(socket: Duplex): Connection {
    let connection = this.connections.get(socket);
    if (!connection) {
      const gone = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      const created: Connection = { socket, owing: new Map(), refusal: null, ended: false, gone };
      this.connections.set(socket, created);
      this.live.add(created);
      // Answers queued behind a connection that died never close: they go with it.
      socket.once('close', () => {
        this.live.delete(created);
        created.owing.clear();
      });
      connection = created;
    }
    return connection;
  }

  /** Sends the refusal, if any and if the connection can still take it, and closes it. */
  private end(connection: Connection): void {
    if (connection.ended) return;
    connection.ended = true;
    const { socket, refusal } = connection;
    if (refusal && socket.writable) {
      for (const listener of this.listeners) listener(refusal.answer);
      socket.end(refusal.text);
    } else {
      socket.end();
    }
    const kill = setTimeout(() => socket.destroy(), HALF_OPEN_MS).unref();
    socket.once('close', () => clearTimeout(kill));
  }
}

/** An answer not sent yet says its connection closes after it. */
function closeAfter(response: ServerResponse): void {
  if (!response.headersSent) response.setHeader('Connection', 'close');
}

/** Resolves when the response has been sent (one still queued when its socket closes may never be: Connection.gone). */
function closed(response: ServerResponse): Promise<void> {
  if (response.closed) return Promise.resolve();
  return new Promise((resolve) => response.once('close', () => resolve()));
}
