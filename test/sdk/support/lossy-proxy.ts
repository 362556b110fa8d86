import { createServer, IncomingMessage, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the proxy does with the server's answer to one attempt. */
export type AnswerPlan =
  /** pass it on */
  | 'forward'
  /** the server answered (so it committed); destroy the client's connection instead */
  | 'drop'
  /** never pass it on; wait until the client gives up (its timeout) and closes */
  | 'withhold';

export interface ProxyOptions {
  /** Plan for attempt n (1-based); default: forward. */
  answer?: (attempt: number) => AnswerPlan;
  /** Awaited before attempt n goes to the server. */
  beforeForward?: (attempt: number) => Promise<void> | void;
}

export interface ProxiedAttempt {
  attempt: number;
  method: string;
  path: string;
  idempotencyKey: string | undefined;
  body: Buffer;
  /** The server's status and request id for this attempt, once it answered. */
  upstreamStatus: number | null;
  upstreamRequestId: string | null;
  outcome: 'pending' | 'answered' | 'dropped' | 'withheld';
}

export interface LossyProxy {
  url: string;
  attempts: ProxiedAttempt[];
  /** Resolves once n attempts have reached the proxy. */
  waitForAttempts(n: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * A proxy on 127.0.0.1 in front of the server that can lose answers the way a network
 * does: it forwards each request, lets the server finish (and commit), and then drops
 * the client's connection, or withholds the answer until the client times out. Attempts
 * go to the server one at a time, in order of arrival, so each sees the previous one's
 * committed result.
 */
export async function startLossyProxy(target: string, options: ProxyOptions = {}): Promise<LossyProxy> {
  const attempts: ProxiedAttempt[] = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  let previous: Promise<void> = Promise.resolve();

  const server = createServer((req, res) => {
    void (async () => {
      const body = await readAll(req);
      const record: ProxiedAttempt = {
        attempt: attempts.length + 1,
        method: req.method ?? '',
        path: req.url ?? '',
        idempotencyKey: header(req.headers, 'idempotency-key'),
        body,
        upstreamStatus: null,
        upstreamRequestId: null,
        outcome: 'pending',
      };
      attempts.push(record);
      for (const waiter of waiters.filter((w) => attempts.length >= w.n)) waiter.resolve();
      const turn = previous;
      let done!: () => void;
      previous = new Promise((resolve) => (done = resolve));
      try {
        await turn;
        await options.beforeForward?.(record.attempt);
        const answer = await forward(target, req, body);
        record.upstreamStatus = answer.status;
        record.upstreamRequestId = header(answer.headers, 'x-request-id') ?? null;
        const plan = options.answer?.(record.attempt) ?? 'forward';
        if (plan === 'drop') {
          record.outcome = 'dropped';
          req.socket.destroy();
        } else if (plan === 'withhold') {
          record.outcome = 'withheld';
          if (!req.socket.destroyed) await new Promise((resolve) => req.socket.once('close', resolve));
        } else {
          record.outcome = 'answered';
          res.writeHead(answer.status, answer.headers);
          res.end(answer.body);
        }
      } catch {
        req.socket.destroy();
      } finally {
        done();
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    attempts,
    waitForAttempts: (n) =>
      attempts.length >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve })),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function readAll(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

function header(headers: IncomingMessage['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

interface Answer {
  status: number;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

function forward(target: string, req: IncomingMessage, body: Buffer): Promise<Answer> {
  const url = new URL(req.url ?? '/', target);
  const headers = { ...req.headers, host: url.host, connection: 'close' };
  return new Promise((resolve, reject) => {
    const upstream = httpRequest(url, { method: req.method, headers, agent: false }, (response) => {
      readAll(response).then(
        (answer) => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: answer }),
        reject,
      );
    });
    upstream.on('error', reject);
    upstream.end(body);
  });
}
