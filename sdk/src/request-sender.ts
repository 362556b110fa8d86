/**
 * Sends one logical request as one or more attempts (the model is stripe-node's
 * RequestSender). What makes the retries safe:
 *
 * - a POST carries one Idempotency-Key for the whole call: the caller's, never replaced,
 *   or a UUID v4 minted once before the first attempt;
 * - the body is serialised once, so every attempt sends the identical bytes (the server
 *   refuses a key reused with another body);
 * - whether and when to retry is decided by the pure `retryDecision` (retry.ts).
 *
 * Each attempt has its own `timeoutMs`, which covers the answer's headers and body. The
 * caller's `signal` ends the whole call, the waits between attempts included.
 */
import { randomUUID } from 'node:crypto';
import {
  errorFromAnswer,
  KukoPayAPIError,
  KukoPayConnectionError,
  KukoPayError,
  KukoPayInvalidRequestError,
  requestIdOf,
} from './errors.ts';
import { AttemptFailure, retryDecision } from './retry.ts';
import { VERSION } from './version.ts';

export interface RequestOptions {
  /** Milliseconds each attempt may take (connection, headers and body); default: the client's. */
  timeoutMs?: number;
  /** Retries after the first attempt; default: the client's. */
  maxRetries?: number;
  /**
   * Ends the call when aborted, during an attempt or between two: it then throws a
   * KukoPayConnectionError with `reason` `aborted` and is not retried. A POST aborted
   * during an attempt may still have run: retry with its `idempotencyKey` to know.
   */
  signal?: AbortSignal;
}

export interface PostOptions extends RequestOptions {
  /**
   * The operation's Idempotency-Key. Default: a UUID v4 minted once per call. Pass your own
   * (and store it) to retry an operation across calls or processes, e.g. after a
   * KukoPayConnectionError.
   */
  idempotencyKey?: string;
}

/** What the last attempt of a call got back. */
export interface LastResponse {
  status: number;
  requestId: string | null;
  /** True when the server replayed the stored answer of an earlier attempt with the same key. */
  idempotentReplayed: boolean;
  /** Names in lower case. */
  headers: Readonly<Record<string, string>>;
  /** The key the call was sent with (POST only). */
  idempotencyKey: string | null;
  /** Attempts the call took, the first included. */
  attempts: number;
}

export type WithLastResponse<T> = T & { readonly lastResponse: LastResponse };

export interface SenderConfig {
  baseUrl: string;
  maxRetries: number;
  timeoutMs: number;
}

export interface ApiRequest {
  method: 'GET' | 'POST';
  path: string;
  query?: Readonly<Record<string, string | number | undefined>>;
  /** POST only; absent for writes that take no body (close, redeliver). */
  body?: object;
  options?: PostOptions;
}

/**
 * An answer's body is read up to this many bytes. The API's largest (a page of 100 orders
 * with their metadata) is well under 1 MiB; a larger one is no KukoPay answer (a proxy's
 * page, a misdirected download), and reading it whole could exhaust the caller's memory.
 */
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

type AttemptResult =
  /** `text` null: the body was larger than MAX_ANSWER_BYTES, and was not read further. */
  | { status: number; headers: Record<string, string>; text: string | null }
  | { status: null; failure: AttemptFailure; error: unknown };

const USER_AGENT = `kukopay-node/${VERSION} node/${process.version}`;

export class RequestSender {
  /** A private field, so that logging or serialising the client never shows the key. */
  readonly #apiKey: string;

  constructor(
    apiKey: string,
    private readonly config: SenderConfig,
  ) {
    this.#apiKey = apiKey;
  }

  /** The parsed body of the successful answer, and what the last attempt got. */
  async send(request: ApiRequest): Promise<{ body: Record<string, unknown>; lastResponse: LastResponse }> {
    const options = request.options ?? {};
    const maxRetries = options.maxRetries ?? this.config.maxRetries;
    const timeoutMs = options.timeoutMs ?? this.config.timeoutMs;
    checkLimits(maxRetries, timeoutMs);
    const idempotencyKey = request.method === 'POST' ? (options.idempotencyKey ?? randomUUID()) : null;
    // A space at either end would be dropped on the wire as whitespace around the header
    // value: the server would store the key without it.
    if (idempotencyKey !== null && !/^[\x21-\x7e](?:[\x20-\x7e]{0,253}[\x21-\x7e])?$/.test(idempotencyKey)) {
      throw new TypeError('idempotencyKey must be 1 to 255 printable ASCII characters, with no space at either end.');
    }
    const body = request.body === undefined ? undefined : JSON.stringify(request.body);
    if (body !== undefined && Buffer.byteLength(body) > MAX_BODY_BYTES) throw tooLarge(body, idempotencyKey);
    const headers: Record<string, string> = {
      'X-Api-Key': this.#apiKey,
      Accept: 'application/json',
      'User-Agent': USER_AGENT,
    };
    if (idempotencyKey !== null) headers['Idempotency-Key'] = idempotencyKey;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const url = this.url(request);
    const { signal } = options;

    for (let attempt = 1; ; attempt++) {
      if (signal?.aborted) throw aborted(signal, idempotencyKey, attempt > 1);
      const result = await this.attempt(url, { method: request.method, headers, body }, timeoutMs, signal);
      if (result.status === null && signal?.aborted) throw aborted(signal, idempotencyKey, true);
      if (result.status !== null && result.status >= 200 && result.status < 300) {
        return this.success(result, idempotencyKey, attempt);
      }
      const outcome = {
        attempt,
        status: result.status,
        failure: result.status === null ? result.failure : null,
        headers: result.status === null ? {} : result.headers,
        error: result.status === null || result.text === null ? null : errorCodeOf(result.text),
      };
      const decision = retryDecision(outcome, maxRetries);
      if (!decision.retry) throw this.failure(result, idempotencyKey, timeoutMs);
      await sleep(decision.delayMs, signal);
    }
  }

  private url({ path, query }: ApiRequest): string {
    const url = new URL(`${this.config.baseUrl.replace(/\/+$/, '')}${path}`);
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    return url.toString();
  }

  private async attempt(
    url: string,
    init: RequestInit,
    timeoutMs: number,
    callerSignal: AbortSignal | undefined,
  ): Promise<AttemptResult> {
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = callerSignal ? AbortSignal.any([timeout, callerSignal]) : timeout;
    try {
      const response = await fetch(url, { ...init, signal, redirect: 'manual' });
      const text = await readAnswer(response);
      const headers: Record<string, string> = {};
      response.headers.forEach((value, name) => (headers[name] = value));
      return { status: response.status, headers, text };
    } catch (error) {
      // fetch's own TypeError without a cause: the request could not even be built (a
      // header value that is not a byte string, say). Nothing was sent; a retry would
      // fail alike. A network failure is a TypeError too, but with its cause.
      if (isUnsendable(error)) throw error;
      return { status: null, failure: timeout.aborted ? 'timeout' : 'connection', error };
    }
  }

  private success(
    result: { status: number; headers: Record<string, string>; text: string | null },
    idempotencyKey: string | null,
    attempts: number,
  ) {
    const body = result.text === null ? undefined : parseJson(result.text);
    const lastResponse: LastResponse = {
      status: result.status,
      requestId: result.headers['x-request-id'] || requestIdOf(body),
      idempotentReplayed: result.headers['idempotent-replayed'] === 'true',
      headers: result.headers,
      idempotencyKey,
      attempts,
    };
    if (!isAnswer(body)) {
      const what =
        result.text === null ? `a body over ${MAX_ANSWER_BYTES} bytes` : 'a body that is not a KukoPay answer';
      throw new KukoPayAPIError({
        message: `The server answered ${result.status} with ${what}.`,
        status: result.status,
        code: null,
        param: null,
        requestId: lastResponse.requestId,
        idempotencyKey,
        headers: result.headers,
      });
    }
    return { body: body as Record<string, unknown>, lastResponse };
  }

  private failure(result: AttemptResult, idempotencyKey: string | null, timeoutMs: number): KukoPayError {
    if (result.status !== null) {
      const { status, headers, text } = result;
      return errorFromAnswer({ status, headers, body: text === null ? undefined : parseJson(text), idempotencyKey });
    }
    const message =
      result.failure === 'timeout'
        ? `No answer within ${timeoutMs} ms.`
        : `The connection to the server failed: ${describe(result.error)}.`;
    const retry =
      idempotencyKey === null ? '' : ` Retry with the same idempotencyKey (${idempotencyKey}) to get its outcome.`;
    const fields = { message: message + retry, status: null, code: null, param: null, requestId: null, idempotencyKey };
    return new KukoPayConnectionError(result.failure, { ...fields, headers: {} }, result.error);
  }
}

/**
 * The error of a call the caller's signal ended. `sent`: an attempt had been sent, so a
 * POST may have run, and its key is how to find out.
 */
function aborted(signal: AbortSignal, idempotencyKey: string | null, sent: boolean): KukoPayConnectionError {
  const retry =
    sent && idempotencyKey !== null
      ? ` It may have been carried out: retry with the same idempotencyKey (${idempotencyKey}) to get its outcome.`
      : '';
  const fields = { message: `The call was aborted.${retry}`, status: null, code: null, param: null, requestId: null };
  return new KukoPayConnectionError('aborted', { ...fields, idempotencyKey, headers: {} }, signal.reason);
}

/** Waits `ms`, or less when the signal aborts (the caller then sees it aborted). */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** fetch's TypeError for a request it cannot build: a network failure has a cause. */
function isUnsendable(error: unknown): boolean {
  // By name: fetch's errors may come from another realm than this module's TypeError.
  const { name, cause } = typeof error === 'object' && error !== null ? (error as Error) : ({} as Error);
  return name === 'TypeError' && cause === undefined;
}

/** The largest timer Node keeps: a longer one fires after 1 ms (TimeoutOverflowWarning). */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** Throws a TypeError for a retry count or timeout that cannot be meant. */
export function checkLimits(maxRetries: number, timeoutMs: number): void {
  if (!Number.isInteger(maxRetries) || maxRetries < 0) throw new TypeError('maxRetries must be an integer ≥ 0.');
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0 || timeoutMs > MAX_TIMEOUT_MS) {
    throw new TypeError(`timeoutMs must be an integer from 1 to ${MAX_TIMEOUT_MS}.`);
  }
}

/** The server's limit on a request body (docs/errors.md: 413 payload_too_large over 64 KiB). */
const MAX_BODY_BYTES = 64 * 1024;

/**
 * The server's own answer to a body over its limit, without sending it: Node's fetch
 * loses that answer while it is still uploading a body of a few MB (EPIPE), which would
 * read as a connection failure and be uploaded again on every retry.
 */
function tooLarge(body: string, idempotencyKey: string | null): KukoPayInvalidRequestError {
  return new KukoPayInvalidRequestError({
    message: `The request body is ${Buffer.byteLength(body)} bytes; the server takes at most 64 KiB. Nothing was sent.`,
    status: null,
    code: 'payload_too_large',
    param: null,
    requestId: null,
    idempotencyKey,
    headers: {},
  });
}

/**
 * The answer's body as text, as `response.text()` decodes it, or null past
 * MAX_ANSWER_BYTES: the rest is not downloaded.
 */
async function readAnswer(response: Response): Promise<string | null> {
  if (response.body === null) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    // Leaving the loop cancels the stream: the rest is not downloaded.
    if (size > MAX_ANSWER_BYTES) return null;
    chunks.push(chunk);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}

/**
 * A success envelope: `data` an object (a resource, or a list page's array), never null,
 * a string or a number, which no method could hand back as what it promises.
 */
function isAnswer(body: unknown): body is { data: object } {
  if (typeof body !== 'object' || body === null || !('data' in body)) return false;
  const { data } = body as { data: unknown };
  return typeof data === 'object' && data !== null;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function describe(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  return cause instanceof Error ? cause.message : String(cause);
}

/** Attaches `lastResponse` without making it part of the object's own JSON. */
export function withLastResponse<T extends object>(value: T, lastResponse: LastResponse): WithLastResponse<T> {
  Object.defineProperty(value, 'lastResponse', { value: lastResponse, enumerable: false });
  return value as WithLastResponse<T>;
}

/** The `error` of an error envelope, or null when the text is not one. */
function errorCodeOf(text: string): string | null {
  const body = parseJson(text) as { error?: unknown } | null | undefined;
  return typeof body?.error === 'string' ? body.error : null;
}
