import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { DomainError } from '../errors/domain-error';
import { toErrorResponse } from '../errors/error-response';
import { newRequestId, REQUEST_ID_HEADER } from './request-id';

/** An answer written straight to a connection, for a request Fastify never saw. */
export interface RawAnswer {
  requestId: string;
  /** The request's method and URL when the parser read them, else null. */
  method: string | null;
  url: string | null;
  status: number;
  error: string;
}

/**
 * What the HTTP server does below Fastify, on each connection:
 *
 * - Requests the parser refuses still get the error envelope with a request id, then the
 *   connection is closed. When answers to earlier requests on the connection are still
 *   owed (pipelining), the refusal waits behind them, so that a client never reads it as
 *   the answer to a request that was served.
 * - Requests that never reach the router (CONNECT, an `Expect` other than 100-continue)
 *   are routed like any other, or answered in the envelope.
 * - Once the server is draining (SIGTERM), each connection is closed after its last
 *   answer, so that a keep-alive client cannot hold the shutdown until its deadline.
 *
 * Such raw answers are reported to the listeners (the request log, the metrics).
 */
export class Connections {
  /** Requests whose answers a connection still owes. */
  private readonly inFlight = new WeakMap<Duplex, Set<IncomingMessage>>();
  private readonly owed = new WeakMap<Duplex, string>();
  /** Answers being written now, to be told to close their connection when draining. */
  private readonly responses = new Set<ServerResponse>();
  private readonly listeners: ((answer: RawAnswer) => void)[] = [];
  private draining = false;

  constructor(server: Server) {
    server.prependListener('request', (request: IncomingMessage, response: ServerResponse) =>
      this.track(request, response),
    );
    // RFC 9110 lets a server ignore an expectation it does not know; Node would answer a
    // bare 417 otherwise.
    server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) =>
      server.emit('request', request, response),
    );
    server.on('connect', (request: IncomingMessage, socket: Duplex) =>
      this.refuse(socket, new DomainError('route_not_found', 'No route matches this method and path.'), request),
    );
  }

  onRawAnswer(listener: (answer: RawAnswer) => void): void {
    this.listeners.push(listener);
  }

  /** From now on, each connection is closed once it owes no answer, and says so. */
  drain(): void {
    this.draining = true;
    for (const response of this.responses) {
      if (!response.headersSent) response.setHeader('Connection', 'close');
    }
  }

  /**
   * Answers `refusal` on the connection and closes it, after the answers it still owes.
   * When a request in flight has not arrived whole, the refusal is about its own body
   * (a bad chunk, a timeout): it is answered at once, and that request is abandoned.
   * The parser reports again for any later bytes; the first refusal stands.
   */
  refuse(socket: Duplex, refusal: DomainError, request?: IncomingMessage): void {
    if (!socket.writable || this.owed.has(socket)) return;
    const owing = this.inFlight.get(socket);
    // A request whose body stopped arriving is the one refused: the answer takes its id.
    const refused = request ?? [...(owing ?? [])].find((each) => !each.complete);
    const requestId = (refused as { id?: string } | undefined)?.id ?? newRequestId();
    const response = toErrorResponse(refusal, requestId);
    for (const listener of this.listeners) {
      listener({
        requestId,
        method: refused?.method ?? null,
        url: refused?.url ?? null,
        status: response.status,
        error: refusal.code,
      });
    }
    const body = response.json;
    const text =
      `HTTP/1.1 ${response.status} ${STATUS_CODES[response.status]}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      `${REQUEST_ID_HEADER}: ${requestId}\r\n` +
      'Connection: close\r\n\r\n' +
      body;
    if (!owing || owing.size === 0 || refused) {
      socket.end(text);
      return;
    }
    // Not paused: the connection must still read the client's close once answered. The
    // parser only repeats its error on any later bytes.
    this.owed.set(socket, text);
  }

  private track(request: IncomingMessage, response: ServerResponse): void {
    const socket = request.socket;
    let owing = this.inFlight.get(socket);
    if (!owing) this.inFlight.set(socket, (owing = new Set()));
    owing.add(request);
    this.responses.add(response);
    response.once('close', () => {
      this.responses.delete(response);
      owing.delete(request);
      if (owing.size > 0) return;
      const owed = this.owed.get(socket);
      if (owed !== undefined) socket.end(owed);
      else if (this.draining) socket.end();
    });
  }
}
