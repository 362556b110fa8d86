/**
 * What the request's headers say about how it is framed and what its body is, checked
 * before anything reads the body (kuko-fastify-adapter.ts): the rules of HTTP/1.1 that
 * Node's parser lets through, and the body's declared type and codings.
 */
import type { IncomingMessage } from 'node:http';
import { isIPv6 } from 'node:net';
import { DomainError } from '../errors/domain-error';
import { headerLines } from './header-lines';

/**
 * Whether the request asks to switch protocols (`Upgrade`, RFC 9110 §7.8), which this
 * server ignores. Node's parser, told so, stops reading the bytes that came with that
 * request: a request pipelined behind it would wait, unanswered, until the keep-alive
 * timeout. So the connection closes after the answer, and the client sends it again.
 */
export function asksToUpgrade(request: IncomingMessage): boolean {
  return request.headers.upgrade !== undefined;
}

/** Whether the request says a body follows (a length above zero, or a transfer coding). */
export function framesBody(request: IncomingMessage): boolean {
  return request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
}

/**
 * What Node's parser lets through but HTTP/1.1 does not: a request line naming HTTP/2.0 or
 * HTTP/0.9 (which it reads as if it were 1.x, where it refuses 1.2 or 3.0), exactly one Host
 * header with a valid value (RFC 9112 §3.2), and never Content-Length beside
 * Transfer-Encoding (§6.1), which Node refuses for a coding but not for an empty value, nor
 * Transfer-Encoding in HTTP/1.0. Two ways to frame one body are how requests get smuggled
 * past a proxy that reads the other one.
 */
export function framingRefusal(request: IncomingMessage): DomainError | null {
  if (request.httpVersionMajor !== 1) {
    return new DomainError(
      'malformed_request',
      `The request line names HTTP/${request.httpVersion}; this server speaks HTTP/1.1 and HTTP/1.0.`,
    );
  }
  if (request.headers['transfer-encoding'] !== undefined && request.headers['content-length'] !== undefined) {
    return new DomainError('malformed_request', 'The request has both Transfer-Encoding and Content-Length.');
  }
  // HTTP/1.0 has no transfer codings: a proxy of that version frames such a body another
  // way, so its framing is faulty (RFC 9112 §6.1), and the connection must not be reused.
  if (request.httpVersion === '1.0' && request.headers['transfer-encoding'] !== undefined) {
    return new DomainError(
      'malformed_request',
      'An HTTP/1.0 request cannot be framed by Transfer-Encoding: send Content-Length, or speak HTTP/1.1.',
    );
  }
  const hosts = headerLines(request.rawHeaders, 'host').length;
  if (hosts > 1) return new DomainError('malformed_request', 'The request has more than one Host header.');
  if (hosts === 1 && !isHostValue(request.headers.host!)) {
    return new DomainError('malformed_request', 'The Host header is not a host name or address with an optional port.');
  }
  if (hosts === 0 && request.httpVersion === '1.1') {
    return new DomainError('malformed_request', 'An HTTP/1.1 request must have a Host header.');
  }
  return null;
}

/**
 * `uri-host [ ":" port ]` (RFC 9112 §3.2, RFC 3986 §3.2.2): an IP literal in brackets, or a
 * name of unreserved, sub-delimiter and percent-encoded characters (an IPv4 address is
 * one; so is an empty name), then a port of at most 65535, as an absolute-form URL's is
 * read. An IP literal is an IPv6 address as Node reads one (an RFC 6874 zone id, `%25eth0`,
 * included) or an IPvFuture one.
 */
const HOST_VALUE = /^(?:\[([^\]]*)\]|(?:[A-Za-z0-9._~!$&'()*+,;=-]|%[0-9A-Fa-f]{2})*)(?::(\d*))?$/;
const IP_FUTURE = /^v[0-9A-Fa-f]+\.[A-Za-z0-9._~!$&'()*+,;=:-]+$/;

export function isHostValue(host: string): boolean {
  const match = HOST_VALUE.exec(host);
  if (match === null) return false;
  const [, literal, port] = match;
  if (literal !== undefined && !isIPv6(literal) && !IP_FUTURE.test(literal)) return false;
  return port === undefined || port === '' || Number(port) <= 65535;
}

/**
 * A Content-Type as Fastify reads it (its lib/content-type.js): `type/subtype` of token
 * characters before any `;`, whatever parameters follow. Fastify refuses any other with 415
 * before a body parser runs, even for an empty body.
 */
const MEDIA_TYPE = /^\s*[\w!#$%&'*+.^`|~-]+\/[\w!#$%&'*+.^`|~-]+\s*(?:;|$)/;

/**
 * Sets the request's Content-Type to what the body parsers should see. A write without a
 * body needs none (docs/errors.md), so one named anyway, even empty or unreadable
 * (`Content-Type:`, `x`, `;`), is dropped; an unreadable one with a body framed (perhaps an
 * empty chunked one) is read as octet-stream, which the parsers take as no body when empty
 * and refuse 415 otherwise, as Fastify would.
 */
export function settleContentType(request: IncomingMessage): void {
  const type = request.headers['content-type'];
  if (type === undefined) return;
  if (!framesBody(request)) delete request.headers['content-type'];
  else if (!MEDIA_TYPE.test(type)) request.headers['content-type'] = 'application/octet-stream';
}

/**
 * Node keeps the first of two Content-Type lines and drops the other, so a body labelled
 * both application/json and something else would be read as whichever came first. Its
 * type is unclear: refused, as two of any other header we read once are (RFC 9110 §5.3).
 */
export function refuseSecondContentType(request: IncomingMessage): void {
  if (headerLines(request.rawHeaders, 'content-type').length > 1) {
    throw new DomainError(
      'unsupported_media_type',
      'The request has more than one Content-Type header: send one, application/json.',
      'Content-Type',
    );
  }
}

/**
 * Bodies are read as sent: a compressed one (Content-Encoding: gzip …, or a transfer
 * coding beside chunked, `Transfer-Encoding: gzip, chunked`, which Node's parser
 * dechunks and otherwise ignores) would otherwise be parsed as if it were plain JSON, and
 * fail as invalid_json, or, worse, not fail.
 */
export function refuseCodings(request: IncomingMessage): void {
  const encoding = request.headers['content-encoding']?.trim().toLowerCase();
  if (encoding !== undefined && encoding !== '' && encoding !== 'identity') {
    throw new DomainError(
      'unsupported_media_type',
      `Content-Encoding ${encoding} is not supported: send the body uncompressed.`,
      'Content-Encoding',
    );
  }
  const codings = (request.headers['transfer-encoding'] ?? '').split(',').map((each) => each.trim().toLowerCase());
  const other = codings.find((coding) => coding !== '' && coding !== 'chunked');
  if (other !== undefined) {
    throw new DomainError(
      'unsupported_media_type',
      `Transfer-Encoding ${other} is not supported: send the body uncompressed (chunked is fine).`,
      'Transfer-Encoding',
    );
  }
}
