import { createServer, IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Recorded {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** The exact bytes received. */
  body: Buffer;
}

/** An answer to send, or: close the connection without one, or never answer. */
export type Reply = { status: number; headers?: Record<string, string>; body?: object | string } | 'destroy' | 'hang';

export interface ScriptedServer {
  url: string;
  requests: Recorded[];
  close(): Promise<void>;
}

/**
 * An HTTP server on 127.0.0.1 that records every request and answers the n-th with
 * `replies[n]` (the last one repeats), to drive the client through known sequences.
 */
export async function startScriptedServer(
  replies: Reply[] | ((index: number, request: Recorded) => Reply),
): Promise<ScriptedServer> {
  const requests: Recorded[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const recorded = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
      };
      const index = requests.push(recorded) - 1;
      const reply =
        typeof replies === 'function' ? replies(index, recorded) : replies[Math.min(index, replies.length - 1)];
      if (reply === 'destroy') return req.socket.destroy();
      if (reply === 'hang') return;
      const body = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body ?? {});
      res.writeHead(reply.status, {
        'Content-Type': 'application/json',
        'X-Request-Id': `req_${index}`,
        ...reply.headers,
      });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const ORDER = {
  id: 'ord_0123456789abcdef0123456789abcdef',
  object: 'order',
  out_trade_no: 'ORDER_1',
  amount: 2990,
  currency: 'USD',
  subject: 'Annual plan',
  description: null,
  status: 'pending',
  amount_refunded: 0,
  environment: 'test',
  metadata: {},
  notify_url: null,
  return_url: null,
  created_at: '2026-11-30T12:00:00.000Z',
  paid_at: null,
  closed_at: null,
};

export const ok = (data: object, status = 200, headers: Record<string, string> = {}): Reply => ({
  status,
  headers,
  body: { data, request_id: 'req_x' },
});

export const apiError = (status: number, error: string, type: string, param: string | null = null): Reply => ({
  status,
  body: { code: status, error, type, message: `${error} happened`, param, request_id: 'req_x' },
});
