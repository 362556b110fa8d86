import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import request from 'supertest';
import { createMerchant, orderBody } from './support/factories';
import { injectFault, waitForAnAdvisoryLock } from './support/faults';
import { startServerProcess } from './support/server-process';
import { startTestApp, TestApp } from './support/test-app';

describe('graceful shutdown (docs/operations.md)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  /**
   * A server process with one keyed create in flight: its INSERT sleeps 1 s, so a signal
   * sent once `inFlight` holds its key's lock arrives mid-request. `stop` ends both.
   */
  async function serverWithCreateInFlight() {
    const { testKey } = await createMerchant(t);
    const body = orderBody();
    const restore = await injectFault(
      t.db.pool,
      'orders',
      `IF NEW.out_trade_no = '${body.out_trade_no}' THEN PERFORM pg_sleep(1); END IF;`,
    );
    const server = await startServerProcess({ DATABASE_URL: t.db.url, SHUTDOWN_TIMEOUT_MS: '8000' });
    // fetch keeps its connections alive: the client would hold the drain open, were the
    // connection not closed after the answer.
    const inFlight = fetch(`${server.url}/v1/orders`, {
      method: 'POST',
      headers: { 'X-Api-Key': testKey, 'Idempotency-Key': randomUUID(), 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    await waitForAnAdvisoryLock(t.db.pool);
    const stop = async () => {
      await server.kill();
      await restore();
    };
    return { server, inFlight, outTradeNo: body.out_trade_no, stop };
  }

  it('on SIGTERM finishes the request in flight, closes its keep-alive connection, exits 0 and accepts nothing more', async () => {
    const { server, inFlight, outTradeNo, stop } = await serverWithCreateInFlight();
    try {
      server.child.kill('SIGTERM');

      const answer = await inFlight;
      expect(answer.status).toBe(201);
      expect(answer.headers.get('connection')).toBe('close');
      // Exit 1 would mean the drain waited for SHUTDOWN_TIMEOUT_MS.
      expect(await server.exited).toBe(0);
      await expect(request(server.url).get('/health')).rejects.toThrow(/ECONNREFUSED/);
      const { rows } = await t.db.pool.query('SELECT 1 FROM orders WHERE out_trade_no = $1', [outTradeNo]);
      expect(rows).toHaveLength(1);
    } finally {
      await stop();
    }
  });

  // Ctrl-C under `npm start`: the terminal signals the process group and npm forwards its
  // copy, so the server gets SIGINT twice. The second must not end the drain.
  it('drains once however many stop signals come: a second SIGINT neither cuts the request in flight nor the exit', async () => {
    const { server, inFlight, stop } = await serverWithCreateInFlight();
    try {
      server.child.kill('SIGINT');
      await new Promise((pause) => setTimeout(pause, 50));
      server.child.kill('SIGINT');
      server.child.kill('SIGTERM');

      expect((await inFlight).status).toBe(201);
      expect(await server.exited).toBe(0);
      expect(server.stdout.join('\n')).toContain('SIGINT received again: already stopping since SIGINT');
    } finally {
      await stop();
    }
  });

  it('closes a connection that has sent nothing yet at once on SIGTERM, and exits 0', async () => {
    const server = await startServerProcess({ DATABASE_URL: t.db.url, SHUTDOWN_TIMEOUT_MS: '8000' });
    const socket = connect(Number(new URL(server.url).port), '127.0.0.1');
    socket.on('error', () => undefined);
    try {
      await new Promise((resolve) => socket.once('connect', resolve));
      const started = Date.now();
      server.child.kill('SIGTERM');
      const code = await server.exited;
      expect(code).toBe(0);
      expect(Date.now() - started).toBeLessThan(8000);
    } finally {
      socket.destroy();
      await server.kill();
    }
  });

  it('refuses a request still trickling its body in on SIGTERM, and exits 0 at once', async () => {
    const { testKey } = await createMerchant(t);
    const server = await startServerProcess({ DATABASE_URL: t.db.url, SHUTDOWN_TIMEOUT_MS: '8000' });
    const socket = connect(Number(new URL(server.url).port), '127.0.0.1');
    socket.on('error', () => undefined);
    const received: Buffer[] = [];
    socket.on('data', (chunk) => received.push(chunk));
    try {
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(
        'POST /v1/orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n' +
          `X-Api-Key: ${testKey}\r\n\r\n{"a":`,
      );
      await new Promise((pause) => setTimeout(pause, 300));
      const started = Date.now();
      server.child.kill('SIGTERM');
      const code = await server.exited;
      expect(code).toBe(0);
      expect(Date.now() - started).toBeLessThan(8000);
      expect(Buffer.concat(received).toString()).toContain('"error":"request_timeout"');
    } finally {
      socket.destroy();
      await server.kill();
    }
  });
  // Its client never got an answer, so it sends the request again (RFC 9112 §9.3.2).
  it('on SIGTERM answers the request in flight and never serves the one pipelined behind it', async () => {
    const { testKey } = await createMerchant(t);
    const [first, behind] = [orderBody(), orderBody()];
    const restore = await injectFault(
      t.db.pool,
      'orders',
      `IF NEW.out_trade_no = '${first.out_trade_no}' THEN PERFORM pg_sleep(1); END IF;`,
    );
    const server = await startServerProcess({ DATABASE_URL: t.db.url, SHUTDOWN_TIMEOUT_MS: '8000' });
    const socket = connect(Number(new URL(server.url).port), '127.0.0.1');
    socket.on('error', () => undefined);
    const received: Buffer[] = [];
    socket.on('data', (chunk) => received.push(chunk));
    const post = (body: object) => {
      const text = JSON.stringify(body);
      return (
        `POST /v1/orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(text)}\r\nX-Api-Key: ${testKey}\r\n\r\n${text}`
      );
    };
    try {
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(post(first) + post(behind));
      await new Promise((pause) => setTimeout(pause, 400));
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
      const statuses = [
        ...Buffer.concat(received)
          .toString()
          .matchAll(/HTTP\/1\.1 (\d{3})/g),
      ].map((m) => m[1]);
      expect(statuses).toEqual(['201']);
      const { rows } = await t.db.pool.query('SELECT out_trade_no FROM orders WHERE out_trade_no = ANY($1)', [
        [first.out_trade_no, behind.out_trade_no],
      ]);
      expect(rows).toEqual([{ out_trade_no: first.out_trade_no }]);
    } finally {
      socket.destroy();
      await server.kill();
      await restore();
    }
  });
});
