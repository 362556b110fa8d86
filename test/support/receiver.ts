import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, IncomingHttpHeaders, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Pool } from 'pg';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** What the receiver answers to the n-th request (0-based); undefined: never answers. */
export type Answer = (
  n: number,
  received: Received,
) => { status: number; headers?: Record<string, string> } | undefined;

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** The most requests with one webhook-id in flight at the same time. */
  maxConcurrentPerId: number;
  close(): Promise<void>;
}

/** A merchant's notification endpoint on 127.0.0.1 that records every request. */
export async function startReceiver(answer: Answer = () => ({ status: 200 }), delayMs = 0): Promise<Receiver> {
  const received: Received[] = [];
  const inFlight = new Map<string, number>();
  const hanging = new Set<ServerResponse>();
  const receiver = { received, maxConcurrentPerId: 0 } as Receiver;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const entry = { headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      const n = received.push(entry) - 1;
      const id = String(request.headers['webhook-id']);
      inFlight.set(id, (inFlight.get(id) ?? 0) + 1);
      receiver.maxConcurrentPerId = Math.max(receiver.maxConcurrentPerId, inFlight.get(id)!);
      const reply = answer(n, entry);
      setTimeout(() => {
        inFlight.set(id, inFlight.get(id)! - 1);
        if (!reply) {
          hanging.add(response);
          return;
        }
        response.writeHead(reply.status, reply.headers ?? {}).end('{"ok":true}');
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  receiver.port = port;
  receiver.url = `http://127.0.0.1:${port}/notify`;
  receiver.close = () => {
    for (const response of hanging) response.destroy();
    server.closeAllConnections();
    return new Promise((resolve) => server.close(() => resolve()));
  };
  return receiver;
}

/** Standard Webhooks verification written out by hand (independent of the signing library). */
export function signedBy(received: Received, secret: string): boolean {
  const id = received.headers['webhook-id'];
  const timestamp = received.headers['webhook-timestamp'];
  const header = String(received.headers['webhook-signature'] ?? '');
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${received.body}`).digest();
  return header.split(' ').some((entry) => {
    const [version, signature] = entry.split(',');
    const given = Buffer.from(signature ?? '', 'base64');
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
  });
}

/** Waits until the query returns a truthy `done`, checking every 100 ms (deadline only against hangs). */
export async function waitFor(pool: Pool, sql: string, params: unknown[] = [], timeoutMs = 45000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await pool.query(sql, params);
    if (rows[0]?.done) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${sql}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Until no event of the database is pending any more. */
export function waitForSettled(pool: Pool, timeoutMs?: number): Promise<void> {
  return waitFor(pool, `SELECT count(*) = 0 AS done FROM events WHERE delivery_status = 'pending'`, [], timeoutMs);
}

/** Polls a condition every 20 ms; the deadline only guards against a hang. */
export async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
