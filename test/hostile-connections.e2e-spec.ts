import { randomUUID } from 'node:crypto';
import { connect, Socket } from 'node:net';
import { expectError, expectSuccess } from './support/expect-error';
import { createMerchant, createOrder, orderBody, postOrder as postOrderAs, TestMerchant } from './support/factories';
import { delta, scrape } from './support/metrics';
import { startServerProcess } from './support/server-process';
import { ADMIN_TOKEN, startTestApp, TestApp } from './support/test-app';
import { WEBHOOK_ENV } from './support/webhooks';

/** What a raw socket got back: status, headers and the JSON body, once the server closed it. */
interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
  closed: boolean;
}

/** Writes bytes as they are (no client library would send them) and reads until the server closes. */
function rawExchange(port: number, chunks: (Buffer | string)[], gapMs = 0, waitMs = 15_000): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    const giveUp = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${waitMs} ms`));
    }, waitMs);
    socket.on('data', (chunk) => received.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(giveUp);
      const text = Buffer.concat(received).toString('latin1');
      const [head, ...rest] = text.split('\r\n\r\n');
      const [statusLine, ...headerLines] = head.split('\r\n');
      const headers = Object.fromEntries(
        headerLines.map((line) => [
          line.slice(0, line.indexOf(':')).toLowerCase(),
          line.slice(line.indexOf(':') + 1).trim(),
        ]),
      );
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(rest.join('\r\n\r\n'));
      } catch {
        // left empty: the assertions say what was expected
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body, closed: true });
    });
    socket.on('connect', async () => {
      for (const chunk of chunks) {
        if (socket.destroyed) return;
        socket.write(chunk);
        if (gapMs) await new Promise((pause) => setTimeout(pause, gapMs));
      }
    });
  });
}

/** Everything a raw socket got back, as text, once the server closed it. */
function rawText(port: number, chunks: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(port, '127.0.0.1', () => chunks.forEach((chunk) => socket.write(chunk)));
    const received: Buffer[] = [];
    const giveUp = setTimeout(() => {
      socket.destroy();
      reject(new Error('the server did not close the connection'));
    }, 15_000);
    socket.on('data', (chunk) => received.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(giveUp);
      resolve(Buffer.concat(received).toString('latin1'));
    });
  });
}

function expectRawError(answer: RawAnswer, status: number, error: string): void {
  expect({ status: answer.status, error: answer.body.error }).toEqual({ status, error });
  expect(answer.headers['content-type']).toMatch(/^application\/json/);
  expect(answer.body.request_id).toMatch(/^req_[0-9a-f]{32}$/);
  expect(answer.headers['x-request-id']).toBe(answer.body.request_id);
  expect(answer.closed).toBe(true);
}

describe('hostile connections and encodings (docs/operations.md)', () => {
  let t: TestApp;
  let port: number;
  let merchant: TestMerchant;

  beforeAll(async () => {
    t = await startTestApp({ ...WEBHOOK_ENV, REQUEST_TIMEOUT_MS: '2000' });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.getHttpServer().address() as { port: number }).port;
    merchant = await createMerchant(t);
  });
  afterAll(() => t.close());

  /** POST /v1/orders with the merchant's key; a string body is sent as it is, as JSON. */
  const postOrder = (body: object | string) => postOrderAs(t, merchant.testKey, body);

  describe('HTTP parser errors answer the envelope with a request id', () => {
    it.each([
      ['a DEL byte in a header', 'GET /health HTTP/1.1\r\nHost: x\r\nX-Bad: a\x7fb\r\n\r\n', 400, 'malformed_request'],
      [
        'a raw 0xFF byte in the URL',
        Buffer.from('GET /v1/\xffrders HTTP/1.1\r\nHost: x\r\n\r\n', 'latin1'),
        400,
        'malformed_request',
      ],
      [
        'Content-Length with Transfer-Encoding',
        'POST /v1/orders HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
        400,
        'malformed_request',
      ],
      [
        'headers over 16 KiB',
        `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
        431,
        'headers_too_large',
      ],
    ])('%s', async (_name, request, status, error) => {
      expectRawError(await rawExchange(port, [request]), status, error);
    });

    it('counts them in /metrics, without a route', async () => {
      const series = 'kukopay_http_requests_total{method="unparsed",route="unmatched",status="400"}';
      const before = await scrape(t);
      await rawExchange(port, ['GET /health HTTP/1.1\r\nHost: x\r\nX-Bad: a\x7fb\r\n\r\n']);
      expect(delta(before, await scrape(t), series)).toBe(1);
    });
  });

  describe('requests Node would answer on its own, or drop', () => {
    it.each([
      ['HTTP/1.1 without Host', 'GET /health HTTP/1.1\r\n\r\n', 400, 'malformed_request'],
      ['a request line naming HTTP/2.0', 'GET /health HTTP/2.0\r\nHost: x\r\n\r\n', 400, 'malformed_request'],
      ['a request line naming HTTP/0.9', 'GET /health HTTP/0.9\r\n\r\n', 400, 'malformed_request'],
      ['two Host headers', 'GET /health HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n', 400, 'malformed_request'],
      ['a Host with a space', 'GET /health HTTP/1.1\r\nHost: a b\r\n\r\n', 400, 'malformed_request'],
      ['a Host with an unclosed IP literal', 'GET /health HTTP/1.1\r\nHost: [::1\r\n\r\n', 400, 'malformed_request'],
      ['a Host with a port past 65535', 'GET /health HTTP/1.1\r\nHost: x:99999\r\n\r\n', 400, 'malformed_request'],
      [
        'an empty Transfer-Encoding beside Content-Length',
        'POST /v1/orders HTTP/1.1\r\nHost: x\r\nTransfer-Encoding:\r\nContent-Length: 2\r\n\r\n{}',
        400,
        'malformed_request',
      ],
      [
        'HTTP/1.0 with Transfer-Encoding, which it does not have',
        'POST /v1/orders HTTP/1.0\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
        400,
        'malformed_request',
      ],
      ['CONNECT', 'CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n', 404, 'route_not_found'],
    ])('%s', async (_name, request, status, error) => {
      expectRawError(await rawExchange(port, [request]), status, error);
    });

    it('refuses a body labelled with two content types, whichever comes first (Node keeps the first)', async () => {
      for (const [first, second] of [
        ['application/json', 'text/plain'],
        ['text/plain', 'application/json'],
      ]) {
        const order = orderBody();
        const body = JSON.stringify(order);
        const answer = await rawExchange(port, [
          `POST /v1/orders HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Api-Key: ${merchant.testKey}\r\n` +
            `Content-Type: ${first}\r\nContent-Type: ${second}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
        ]);
        expect({ status: answer.status, error: answer.body.error, param: answer.body.param }).toEqual({
          status: 415,
          error: 'unsupported_media_type',
          param: 'Content-Type',
        });
        const { rows } = await t.db.pool.query('SELECT 1 FROM orders WHERE out_trade_no = $1', [order.out_trade_no]);
        expect(rows).toHaveLength(0);
      }
    });

    it('serves a request whose Host is a name or an address, with or without a port', async () => {
      for (const host of ['api.example.com', 'localhost:3000', '127.0.0.1:80', '[::1]:8080', '[::1]', 'a,b', '']) {
        const answer = await rawExchange(port, [`GET /health HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`]);
        expect({ host, status: answer.status }).toEqual({ host, status: 200 });
      }
    });

    it('serves HTTP/1.0, which needs no Host', async () => {
      const answer = await rawExchange(port, ['GET /health HTTP/1.0\r\n\r\n']);
      expect(answer.status).toBe(200);
    });

    it('answers a request whose client half-closes its side once it is sent, then closes', async () => {
      const body = JSON.stringify(orderBody());
      const request =
        `POST /v1/orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
        `X-Api-Key: ${merchant.testKey}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
      const text = await new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => socket.end(request));
        const received: Buffer[] = [];
        const giveUp = setTimeout(() => reject(new Error('the server did not close the connection')), 10_000);
        socket.on('data', (chunk) => received.push(chunk));
        socket.on('close', () => {
          clearTimeout(giveUp);
          resolve(Buffer.concat(received).toString('utf8'));
        });
      });
      expect(text).toMatch(/^HTTP\/1\.1 201 /);
      const { data } = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { data: { id: string } };
      const { rows } = await t.db.pool.query('SELECT 1 FROM orders WHERE id = $1', [data.id]);
      expect(rows).toHaveLength(1);
    });

    it('serves a request whose Expect it does not know as if it had none', async () => {
      const answer = await rawExchange(port, [
        `GET /v1/orders/ord_missing HTTP/1.1\r\nHost: x\r\nConnection: close\r\nExpect: bogus\r\n` +
          `X-Api-Key: ${merchant.testKey}\r\n\r\n`,
      ]);
      expectRawError(answer, 404, 'resource_missing');
    });

    describe('Expect: 100-continue', () => {
      const head = (length: number, extra = '') =>
        `POST /v1/orders HTTP/1.1\r\nHost: x\r\n${extra}Connection: close\r\nExpect: 100-continue\r\n` +
        `Content-Type: application/json\r\nX-Api-Key: ${merchant.testKey}\r\nContent-Length: ${length}\r\n\r\n`;

      it('says 100 Continue before it reads the body, then answers the request', async () => {
        const body = JSON.stringify(orderBody());
        // The body is sent only once 100 Continue has arrived, as a client that waits does.
        const text = await new Promise<string>((resolve, reject) => {
          const socket = connect(port, '127.0.0.1', () => socket.write(head(Buffer.byteLength(body))));
          const received: Buffer[] = [];
          const giveUp = setTimeout(() => reject(new Error(`no answer: ${Buffer.concat(received)}`)), 15_000);
          socket.on('data', (chunk) => {
            if (received.length === 0 && /^HTTP\/1\.1 100 Continue\r\n\r\n/.test(chunk.toString('latin1'))) {
              socket.write(body);
            }
            received.push(chunk);
          });
          socket.on('error', () => undefined);
          socket.on('close', () => {
            clearTimeout(giveUp);
            resolve(Buffer.concat(received).toString('latin1'));
          });
        });
        expect(text).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 201 Created\r\n/);
      });

      // The client then never uploads a body only to have the connection cut under it.
      it.each([
        ['a Content-Length over 64 KiB', 1_000_000, '', 413, 'payload_too_large'],
        ['two Host headers', 10, 'Host: y\r\n', 400, 'malformed_request'],
      ])('refuses %s without 100 Continue, before the body', async (_name, length, extra, status, error) => {
        const text = await rawText(port, [head(length, extra)]);
        expect(text).not.toMatch(/100 Continue/);
        expect(text).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
        expect(text).toContain(`"error":"${error}"`);
      });

      it('answers the admin API of a deployment without ADMIN_TOKEN as an unknown URL, before the body', async () => {
        const closed = await startTestApp({ ADMIN_TOKEN: '' }, t.db);
        try {
          await closed.app.listen({ port: 0, host: '127.0.0.1' });
          const closedPort = (closed.app.getHttpServer().address() as { port: number }).port;
          const text = await rawText(closedPort, [
            `POST /v1/admin/merchants HTTP/1.1\r\nHost: x\r\nConnection: close\r\nExpect: 100-continue\r\n` +
              `Content-Type: application/json\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\nContent-Length: 10\r\n\r\n`,
          ]);
          expect(text).not.toMatch(/100 Continue/);
          expect(text).toMatch(/^HTTP\/1\.1 404 /);
          expect(text).toContain('"error":"route_not_found"');
          // However long its id: the route is not there, whatever the id names.
          const longId = await closed
            .http()
            .post(`/v1/admin/merchants/${'m'.repeat(1200)}/api_keys/roll`)
            .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
            .send({});
          expectError(longId, 404, 'route_not_found');
        } finally {
          await closed.close();
        }
      });
    });

    it('keeps every header, however many (2,500 fit in 16 KiB): the Idempotency-Key after them counts', async () => {
      const key = randomUUID();
      const body = JSON.stringify(orderBody());
      const filler = Array.from({ length: 2500 }, () => 'a:1\r\n').join('');
      const send = () =>
        rawExchange(port, [
          `POST /v1/orders HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n` +
            `Content-Length: ${Buffer.byteLength(body)}\r\nX-Api-Key: ${merchant.testKey}\r\n${filler}` +
            `Idempotency-Key: ${key}\r\n\r\n${body}`,
        ]);
      const first = await send();
      expect(first.status).toBe(201);
      const again = await send();
      expect(again.headers['idempotent-replayed']).toBe('true');
    });

    it.each([
      ['a bad header byte', 'GET /health HTTP/1.1\r\nHost: x\r\nX-Bad: a\x7fb\r\n\r\n', 400],
      [
        'a bad chunk in its own body',
        'POST /v1/orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
        400,
      ],
      ['CONNECT', 'CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n', 404],
    ])('answers a pipelined create before refusing the request behind it (%s)', async (_name, behind, status) => {
      const body = JSON.stringify(orderBody());
      const exchange = await rawText(port, [
        `POST /v1/orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nX-Api-Key: ${merchant.testKey}\r\n\r\n${body}${behind}`,
      ]);
      const statuses = [...exchange.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((match) => Number(match[1]));
      expect(statuses).toEqual([201, status]);
    });

    // Node would read the GET while the close waits on the row, and serve it at once.
    it('serves pipelined requests one at a time, so a read behind a write sees the write', async () => {
      const order = await createOrder(t, merchant.testKey);
      const holder = await t.db.pool.connect();
      try {
        await holder.query('BEGIN');
        await holder.query('SELECT 1 FROM orders WHERE id = $1 FOR UPDATE', [order.id]);
        const auth = `Host: x\r\nX-Api-Key: ${merchant.testKey}\r\n`;
        const exchange = rawText(port, [
          `POST /v1/orders/${order.id}/close HTTP/1.1\r\n${auth}\r\n` +
            `GET /v1/orders/${order.id} HTTP/1.1\r\n${auth}Connection: close\r\n\r\n`,
        ]);
        await new Promise((pause) => setTimeout(pause, 500));
        await holder.query('COMMIT');
        const statuses = [...(await exchange).matchAll(/"status":"(\w+)"/g)].map((match) => match[1]);
        expect(statuses).toEqual(['closed', 'closed']);
      } finally {
        await holder.query('ROLLBACK').catch(() => undefined);
        holder.release();
      }
    });

    // Its client never got an answer, so it sends the request again (RFC 9112 §9.3.2).
    // Node drops a waiting request's body with the connection, so the body-less close is
    // the one that shows the server's own check.
    it.each([
      ['a create, with a body', 'create'],
      ['a close, without a body', 'close'],
    ] as const)(
      'never serves a pipelined request whose connection was reset while it waited its turn: %s',
      async (_name, behind) => {
        const order = await createOrder(t, merchant.testKey);
        const other = await createOrder(t, merchant.testKey);
        const body = orderBody();
        const text = JSON.stringify(body);
        const auth = `Host: x\r\nX-Api-Key: ${merchant.testKey}\r\n`;
        const second =
          behind === 'create'
            ? `POST /v1/orders HTTP/1.1\r\n${auth}Content-Type: application/json\r\n` +
              `Content-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`
            : `POST /v1/orders/${other.id}/close HTTP/1.1\r\n${auth}\r\n`;
        const holder = await t.db.pool.connect();
        try {
          await holder.query('BEGIN');
          await holder.query('SELECT 1 FROM orders WHERE id = $1 FOR UPDATE', [order.id]);
          const socket = connect(port, '127.0.0.1', () =>
            socket.write(`POST /v1/orders/${order.id}/close HTTP/1.1\r\n${auth}\r\n${second}`),
          );
          socket.on('error', () => undefined);
          await new Promise((pause) => setTimeout(pause, 300));
          // A reset: a client that only half-closes its side may still read both answers.
          socket.resetAndDestroy();
          await new Promise((pause) => setTimeout(pause, 100));
          await holder.query('COMMIT');
          await new Promise((pause) => setTimeout(pause, 500));
          const created = await t.db.pool.query('SELECT 1 FROM orders WHERE out_trade_no = $1', [body.out_trade_no]);
          expect(created.rows).toHaveLength(0);
          const { rows } = await t.db.pool.query('SELECT status FROM orders WHERE id = $1', [other.id]);
          expect(rows[0].status).toBe('pending');
        } finally {
          await holder.query('ROLLBACK').catch(() => undefined);
          holder.release();
        }
      },
    );

    // Node's parser stops reading what came with a request asking to switch protocols: the
    // create behind it was neither served nor answered, and the connection stayed open
    // until the keep-alive timeout (72 s).
    it.each(['h2c', 'websocket'])(
      'closes the connection after answering a request asking to upgrade to %s, so a request behind it is sent again',
      async (protocol) => {
        const body = orderBody();
        const text = JSON.stringify(body);
        const auth = `Host: x\r\nX-Api-Key: ${merchant.testKey}\r\n`;
        const exchange = await rawText(port, [
          `GET /v1/account HTTP/1.1\r\n${auth}Connection: Upgrade\r\nUpgrade: ${protocol}\r\n\r\n` +
            `POST /v1/orders HTTP/1.1\r\n${auth}Content-Type: application/json\r\n` +
            `Content-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
        ]);
        expect([...exchange.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((match) => Number(match[1]))).toEqual([200]);
        expect(exchange).toMatch(/\r\nconnection: close\r\n/i);
        const created = await t.db.pool.query('SELECT 1 FROM orders WHERE out_trade_no = $1', [body.out_trade_no]);
        expect(created.rows).toHaveLength(0);
      },
    );

    it('answers a deep pipeline in order, one request at a time', async () => {
      const order = await createOrder(t, merchant.testKey);
      const auth = `Host: x\r\nX-Api-Key: ${merchant.testKey}\r\n`;
      const requests = Array.from(
        { length: 40 },
        (_, i) => `GET /v1/orders/${order.id}?n=${i} HTTP/1.1\r\n${auth}\r\n`,
      );
      const exchange = await rawText(port, [
        requests.join('') + `GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
      ]);
      const statuses = [...exchange.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((match) => Number(match[1]));
      expect(statuses).toEqual([...Array(40).fill(200), 200]);
    });

    it('survives a CONNECT whose client resets the connection at once (a process of its own)', async () => {
      const server = await startServerProcess({ DATABASE_URL: t.db.url });
      const serverPort = Number(new URL(server.url).port);
      try {
        for (let i = 0; i < 5; i++) {
          await new Promise<void>((resolve) => {
            const socket = connect(serverPort, '127.0.0.1', () => {
              socket.write('CONNECT 127.0.0.1:80 HTTP/1.1\r\nHost: 127.0.0.1:80\r\n\r\n');
              setImmediate(() => {
                socket.resetAndDestroy();
                resolve();
              });
            });
            socket.on('error', () => undefined);
          });
        }
        await new Promise((pause) => setTimeout(pause, 300));
        expect(server.child.exitCode).toBeNull();
        expect((await fetch(`${server.url}/health`)).status).toBe(200);
      } finally {
        await server.kill();
      }
    });

    it('never serves a request refused 408 whose body arrives after the refusal, nor one behind it', async () => {
      const body = JSON.stringify(orderBody());
      const outTradeNo = JSON.parse(body).out_trade_no as string;
      const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
      socket.on('error', () => undefined);
      const received: Buffer[] = [];
      socket.on('data', (chunk) => received.push(chunk));
      const ended = new Promise((resolve) => socket.once('end', resolve));
      socket.write(
        `POST /v1/orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nX-Api-Key: ${merchant.testKey}\r\n\r\n${body.slice(0, 10)}`,
      );
      try {
        await ended; // REQUEST_TIMEOUT_MS is 2 s here
        expect(Buffer.concat(received).toString()).toContain('request_timeout');
        // The rest, too late, and another request behind it on the closing connection.
        const next = JSON.stringify(orderBody());
        socket.write(
          body.slice(10) +
            `POST /v1/orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
            `Content-Length: ${Buffer.byteLength(next)}\r\nX-Api-Key: ${merchant.testKey}\r\n\r\n${next}`,
        );
        await new Promise((pause) => setTimeout(pause, 1000));
        const { rows } = await t.db.pool.query('SELECT 1 FROM orders WHERE out_trade_no = ANY($1)', [
          [outTradeNo, JSON.parse(next).out_trade_no],
        ]);
        expect(rows).toHaveLength(0);
      } finally {
        socket.destroy();
      }
    });

    it('destroys a refused connection whose client never closes its side', async () => {
      const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
      socket.on('error', () => undefined);
      socket.on('data', () => undefined);
      const ended = new Promise((resolve) => socket.once('end', resolve));
      socket.write('GET /health HTTP/1.1\r\nHost: x\r\nX-Bad: a\x7fb\r\n\r\n');
      try {
        await ended; // the answer came and the server closed its side; this client keeps its own open
        const server = t.app.getHttpServer() as import('node:http').Server;
        const open = () => new Promise<number>((resolve) => server.getConnections((_, count) => resolve(count)));
        expect(await open()).toBeGreaterThanOrEqual(1);
        const deadline = Date.now() + 10_000;
        while ((await open()) > 0 && Date.now() < deadline) await new Promise((pause) => setTimeout(pause, 100));
        // The server gave up on it (after 5 s) rather than keep it, and its descriptor, forever.
        expect(await open()).toBe(0);
      } finally {
        socket.destroy();
      }
    }, 15_000);
  });

  describe('slow clients', () => {
    it('closes a request whose body trickles in past REQUEST_TIMEOUT_MS with 408', async () => {
      const head =
        'POST /v1/orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n' +
        `X-Api-Key: ${merchant.testKey}\r\n\r\n`;
      const trickle = Array.from({ length: 40 }, () => ' ');
      expectRawError(await rawExchange(port, [head, ...trickle], 250), 408, 'request_timeout');
    });

    it('closes a connection whose headers trickle in past the limit with 408', async () => {
      const head = 'GET /health HTTP/1.1\r\nHost: x\r\n'.split('');
      expectRawError(await rawExchange(port, head, 250), 408, 'request_timeout');
    });
  });

  describe('percent-encoded paths route and authenticate like their decoded form', () => {
    it('treats an encoded webhook path as the webhook route, which ignores Idempotency-Key', async () => {
      const response = await t
        .http()
        .post('/v1/%77ebhooks/kukopay')
        .set('Idempotency-Key', randomUUID())
        .set('Content-Type', 'application/json')
        .send('{}');
      expectError(response, 400, 'webhook_signature_invalid', 'webhook-id');
    });

    it('treats an encoded admin path as the admin route, which ignores Idempotency-Key', async () => {
      const response = await t
        .http()
        .post('/v1/%61dmin/merchants')
        .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
        .set('Idempotency-Key', randomUUID())
        .send({ name: 'Encoded' });
      expectSuccess(response, 201);
    });

    it('replays a key first used on /v1/orders for /v1/%6Frders: one endpoint', async () => {
      const key = randomUUID();
      const body = orderBody();
      const first = await t
        .http()
        .post('/v1/orders')
        .set('X-Api-Key', merchant.testKey)
        .set('Idempotency-Key', key)
        .send(body);
      expectSuccess(first, 201);
      const again = await t
        .http()
        .post('/v1/%6Frders')
        .set('X-Api-Key', merchant.testKey)
        .set('Idempotency-Key', key)
        .send(body);
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body.data.id).toBe(first.body.data.id);
    });
  });

  describe('one endpoint however the request spells its path', () => {
    /** A keyed POST written by hand, so that the request target goes out exactly as given. */
    const rawPost = (target: string, key: string, body: string) =>
      rawExchange(port, [
        `POST ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: ${merchant.testKey}\r\n` +
          `Idempotency-Key: ${key}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      ]);

    it('replays a create sent through a forward proxy (absolute form) or with a #fragment, both ways', async () => {
      for (const target of [`http://api.example/v1/orders`, '/v1/orders#retry']) {
        const key = randomUUID();
        const body = JSON.stringify(orderBody());
        const first = await rawPost(target, key, body);
        expect(first.status).toBe(201);
        const again = await postOrderAs(t, merchant.testKey, body, key);
        expect(again.status).toBe(201);
        expect(again.headers['idempotent-replayed']).toBe('true');
        expect(again.body.data.id).toBe((first.body.data as { id: string }).id);
        const third = await rawPost(target, key, body);
        expect(third.headers['idempotent-replayed']).toBe('true');
      }
    });

    /** A GET written by hand, its request target sent exactly as given. */
    const rawGet = (target: string) =>
      rawExchange(port, [
        `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: ${merchant.testKey}\r\nConnection: close\r\n\r\n`,
      ]);

    it("says which part of an unreadable URL to fix: the percent-encoding, or an absolute URL's host and port", async () => {
      const cases: [string, RegExp][] = [
        ['/v1/orders/%zz', /^The URL has a malformed percent-encoding\.$/],
        ['http://api.example:99999/v1/orders', /^The absolute URL cannot be read: check its host, its port/],
        ['http://[zz]/v1/orders', /^The absolute URL cannot be read/],
        ['http:///v1/orders', /^The absolute URL cannot be read/],
      ];
      for (const [target, message] of cases) {
        const answer = await rawGet(target);
        expect({ target, status: answer.status, error: answer.body.error, message: answer.body.message }).toEqual({
          target,
          status: 400,
          error: 'malformed_request',
          message: expect.stringMatching(message),
        });
      }
    });

    it("reads a list's query without the #fragment a client sent after it", async () => {
      await createOrder(t, merchant.testKey);
      await createOrder(t, merchant.testKey);
      const all = ((await rawGet('/v1/orders')).body.data as unknown[]).length;
      for (const target of ['/v1/orders#x', '/v1/orders?limit=1#limit=5&x', '/v1/orders?limit=1&#']) {
        const answer = await rawGet(target);
        expect({ target, status: answer.status }).toEqual({ target, status: 200 });
        expect((answer.body.data as unknown[]).length).toBe(target.includes('limit=1') ? 1 : all);
      }
    });

    it('names a query parameter or a field with an empty name as unknown', async () => {
      const named = { message: 'Received unknown parameter with an empty name', param: '' };
      for (const target of ['/v1/orders?=', '/v1/orders?=1&limit=2']) {
        const answer = await rawGet(target);
        expectRawError(answer, 400, 'parameter_unknown');
        expect(answer.body).toMatchObject(named);
      }
      const response = await postOrder(JSON.stringify({ ...orderBody(), '': 1 }));
      expectError(response, 400, 'parameter_unknown', '');
      expect(response.body).toMatchObject(named);
    });

    it('answers a path the reference will not serve from its files (dot segments, NUL) as no route', async () => {
      for (const target of ['/docs/..', '/docs/./x', '/docs/%00', '/docs/%2e%2e/package.json']) {
        expectRawError(await rawGet(target), 404, 'route_not_found');
      }
      expect((await rawGet('/docs/swagger-ui.css')).status).toBe(200);
    });

    it("answers the reference's files' range and precondition refusals with their own status", async () => {
      const file = () => t.http().get('/docs/swagger-ui.css');
      const beyond = await file().set('Range', 'bytes=999999999-');
      expectError(beyond, 416, 'range_not_satisfiable', 'Range');
      expect(beyond.headers['content-range']).toMatch(/^bytes \*\/\d+$/);
      const unreadable = await file().set('Range', 'bytes=abc');
      expectError(unreadable, 416, 'range_not_satisfiable', 'Range');
      // Not "outside the file": it is no byte range at all.
      expect(unreadable.body.message).toMatch(/not a byte range/);
      expectError(await file().set('If-Match', '"another"'), 412, 'precondition_failed');
      expect((await file().set('Range', 'bytes=0-3')).status).toBe(206);
    });

    it('takes an encoded reserved character in a path parameter for the same parameter', async () => {
      const key = randomUUID();
      const close = (id: string) =>
        t.http().post(`/v1/orders/${id}/close`).set('X-Api-Key', merchant.testKey).set('Idempotency-Key', key);
      const first = await close('ord_a:b');
      expectError(first, 404, 'resource_missing', 'id');
      const again = await close('ord_a%3ab');
      expectError(again, 404, 'resource_missing', 'id');
      expect(again.headers['idempotent-replayed']).toBe('true');
    });

    it('checks the signature before reading the body on an encoded webhook path', async () => {
      for (const path of ['/v1/%77ebhooks/kukopay', '//v1/webhooks/kukopay']) {
        const response = await t.http().post(path).set('Content-Type', 'application/json').send('garbage{');
        expectError(response, 400, 'webhook_signature_invalid', 'webhook-id');
      }
    });
  });

  describe('bodies', () => {
    it('refuses a compressed body (415, naming Content-Encoding) and takes identity as plain', async () => {
      const { gzipSync } = await import('node:zlib');
      const body = JSON.stringify(orderBody());
      const compressed = await fetch(`http://127.0.0.1:${port}/v1/orders`, {
        method: 'POST',
        headers: { 'X-Api-Key': merchant.testKey, 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
        body: gzipSync(body),
      });
      expect(compressed.status).toBe(415);
      expect(await compressed.json()).toMatchObject({ error: 'unsupported_media_type', param: 'Content-Encoding' });
      const plain = await t
        .http()
        .post('/v1/orders')
        .set('X-Api-Key', merchant.testKey)
        .set('Content-Encoding', 'identity')
        .set('Content-Type', 'application/json')
        .send(body);
      expectSuccess(plain, 201);
    });

    it('refuses a transfer coding beside chunked (415, naming Transfer-Encoding), storing nothing', async () => {
      const key = randomUUID();
      const body = JSON.stringify(orderBody());
      const chunked = (codings: string) =>
        `POST /v1/orders HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n` +
        `X-Api-Key: ${merchant.testKey}\r\nIdempotency-Key: ${key}\r\nTransfer-Encoding: ${codings}\r\n\r\n` +
        `${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`;
      const refused = await rawExchange(port, [chunked('gzip, chunked')]);
      expectRawError(refused, 415, 'unsupported_media_type');
      expect(refused.body.param).toBe('Transfer-Encoding');
      const { rows } = await t.db.pool.query('SELECT 1 FROM idempotency_keys WHERE key = $1', [key]);
      expect(rows).toHaveLength(0);
      expect((await rawExchange(port, [chunked('chunked')])).status).toBe(201);
    });

    // node:http sends `req.write(''); req.end()` this way, with no content type.
    it('takes an empty chunked body as no body, and refuses one with something in it (415)', async () => {
      const order = await createOrder(t, merchant.testKey);
      const close = (chunks: string) =>
        rawExchange(port, [
          `POST /v1/orders/${order.id}/close HTTP/1.1\r\nHost: x\r\nConnection: close\r\n` +
            `X-Api-Key: ${merchant.testKey}\r\nTransfer-Encoding: chunked\r\n\r\n${chunks}0\r\n\r\n`,
        ]);
      expectRawError(await close('2\r\n{}\r\n'), 415, 'unsupported_media_type');
      const closed = await close('');
      expect({ status: closed.status, order: (closed.body.data as { status: string }).status }).toEqual({
        status: 200,
        order: 'closed',
      });
    });

    it('answers an id longer than any object has as missing, not as a malformed URL', async () => {
      const response = await t
        .http()
        .get(`/v1/orders/ord_${'a'.repeat(1200)}`)
        .set('X-Api-Key', merchant.testKey);
      expectError(response, 404, 'resource_missing', 'id');
      const nested = await t
        .http()
        .get(`/v1/orders/ord_${'a'.repeat(1200)}/refunds`)
        .set('X-Api-Key', merchant.testKey);
      expectError(nested, 404, 'resource_missing', 'id');
      // On the webhook route (encoded or not) the parameter is the provider.
      const provider = await t
        .http()
        .post(`/v1/%77ebhooks/${'p'.repeat(1200)}`)
        .send({});
      expectError(provider, 404, 'resource_missing', 'provider');
    });

    it('asks for the API key before it says an id is too long for any object', async () => {
      const response = await t.http().get(`/v1/orders/ord_${'a'.repeat(1200)}`);
      expectError(response, 401, 'api_key_missing', 'X-Api-Key');
    });

    // The router refuses these before Fastify's request hooks run; they are counted all the same.
    it('counts a path with a malformed percent-encoding in /metrics, without a route', async () => {
      const series = 'kukopay_http_requests_total{method="GET",route="unmatched",status="400"}';
      const before = await scrape(t);
      expectError(await t.http().get('/v1/orders/%zz').set('X-Api-Key', merchant.testKey), 400, 'malformed_request');
      expect(delta(before, await scrape(t), series)).toBe(1);
    });

    it('refuses a body that is not valid UTF-8, and stores nothing under its key', async () => {
      const key = randomUUID();
      const bytes = Buffer.concat([
        Buffer.from('{"out_trade_no":"UTF8_'),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('","amount":1}'),
      ]);
      const response = await fetch(`http://127.0.0.1:${port}/v1/orders`, {
        method: 'POST',
        headers: { 'X-Api-Key': merchant.testKey, 'Idempotency-Key': key, 'Content-Type': 'application/json' },
        body: bytes,
      });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: string }).error).toBe('invalid_json');
      const { rows } = await t.db.pool.query('SELECT 1 FROM idempotency_keys WHERE key = $1', [key]);
      expect(rows).toHaveLength(0);
    });

    it('ignores one leading byte order mark and refuses two, storing nothing under the key', async () => {
      const bom = Buffer.from([0xef, 0xbb, 0xbf]);
      const send = (marks: number, key: string) =>
        fetch(`http://127.0.0.1:${port}/v1/orders`, {
          method: 'POST',
          headers: { 'X-Api-Key': merchant.testKey, 'Idempotency-Key': key, 'Content-Type': 'application/json' },
          body: Buffer.concat([...Array<Buffer>(marks).fill(bom), Buffer.from(JSON.stringify(orderBody()))]),
        });
      expect((await send(1, randomUUID())).status).toBe(201);
      const key = randomUUID();
      const twice = await send(2, key);
      expect(twice.status).toBe(400);
      expect(((await twice.json()) as { error: string }).error).toBe('invalid_json');
      const { rows } = await t.db.pool.query('SELECT 1 FROM idempotency_keys WHERE key = $1', [key]);
      expect(rows).toHaveLength(0);
    });

    it('stores metadata keys named like members of Object.prototype, and refuses them as fields', async () => {
      const metadata = { constructor: 'a', toString: 'b', valueOf: 'c', prototype: 'd', hasOwnProperty: 'e', b: 'f' };
      const created = await postOrder(orderBody({ metadata }));
      expectSuccess(created, 201);
      expect(created.body.data.metadata).toEqual(metadata);
      const { rows } = await t.db.pool.query('SELECT metadata FROM orders WHERE id = $1', [created.body.data.id]);
      expect(rows[0].metadata).toEqual(metadata);
      const fetched = await t.http().get(`/v1/orders/${created.body.data.id}`).set('X-Api-Key', merchant.testKey);
      expect(fetched.body.data.metadata).toEqual(metadata);

      const unknown = await postOrder({ ...orderBody(), constructor: 'x' });
      expectError(unknown, 400, 'parameter_unknown', 'constructor');
      // The limit of 20 keys counts them all, those Nest would have stripped included.
      const tooMany = { constructor: 'x', ...Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, 'v'])) };
      const refused = await postOrder(orderBody({ metadata: tooMany }));
      expectError(refused, 400, 'parameter_invalid', 'metadata');
      const query = await t.http().get('/v1/orders?__proto__=1').set('X-Api-Key', merchant.testKey);
      expectError(query, 400, 'parameter_unknown', '__proto__');
      // Names class-validator's whitelist would let through unseen, being inherited.
      for (const name of ['hasOwnProperty', 'toString', 'valueOf', 'isPrototypeOf', '__defineGetter__']) {
        expectError(await postOrder({ ...orderBody(), [name]: 1 }), 400, 'parameter_unknown', name);
        const listed = await t.http().get(`/v1/orders?${name}=1`).set('X-Api-Key', merchant.testKey);
        expectError(listed, 400, 'parameter_unknown', name);
        const found = await t.http().get(`/v1/refunds?${name}=1`).set('X-Api-Key', merchant.testKey);
        expectError(found, 400, 'parameter_unknown', name);
      }
    });

    it.each(['2990.0', '1.9999999999999999', '3e3', '2990.00000000000001'])(
      'refuses the amount %s as not an integer, whatever its value',
      async (amount) => {
        const body = JSON.stringify(orderBody()).replace(/"amount":\d+/, `"amount":${amount}`);
        const response = await postOrder(body);
        expectError(response, 400, 'parameter_invalid', 'amount');
        expect(response.body.message).toMatch(/integer/);
      },
    );

    it('refuses fields sent to a write that takes none, and takes {} or no body', async () => {
      const order = await postOrder(orderBody());
      const close = () => t.http().post(`/v1/orders/${order.body.data.id}/close`).set('X-Api-Key', merchant.testKey);
      expectError(await close().send({ cancel_reason: 'x' }), 400, 'parameter_unknown', 'cancel_reason');
      expectError(
        await t.http().post('/v1/account/notification_secret/roll').set('X-Api-Key', merchant.testKey).send({ foo: 1 }),
        400,
        'parameter_unknown',
        'foo',
      );
      expectSuccess(await close().send({}), 200);
    });

    it('refuses a body that is a bare fraction as not an object', async () => {
      const response = await postOrder('1.5');
      expectError(response, 400, 'parameter_invalid');
    });

    it('names an unknown field first, whatever it holds: its value is not the thing to fix', async () => {
      for (const value of ['\u0000', '\ud800']) {
        const unknown = await postOrder({ ...orderBody(), zzz: value });
        expectError(unknown, 400, 'parameter_unknown', 'zzz');
        const known = await postOrder(orderBody({ subject: `a${value}` }));
        expectError(known, 400, 'parameter_invalid', 'subject');
        expect(known.body.message).toBe('subject must not contain the NUL character or unpaired UTF-16 surrogates.');
      }
      // Too deep is still refused as it is parsed, before anything walks the body.
      const deep = `{"zzz":${'['.repeat(40)}${']'.repeat(40)}}`;
      expectError(await postOrder(deep), 400, 'parameter_invalid', 'zzz');
    });

    it.each(['1.5', '1e3', '2990.0'])('refuses metadata sent as the number %s, storing nothing', async (number) => {
      const body = orderBody();
      const response = await postOrder(JSON.stringify(body).replace(/}$/, `,"metadata":${number}}`));
      expectError(response, 400, 'parameter_invalid', 'metadata');
      const { rows } = await t.db.pool.query('SELECT 1 FROM orders WHERE out_trade_no = $1', [body.out_trade_no]);
      expect(rows).toEqual([]);
    });

    it('fingerprints a number as written: 1.5 and {"fraction":"1.5"} are two bodies for one key', async () => {
      const key = randomUUID();
      const send = (metadata: string) =>
        t
          .http()
          .post('/v1/orders')
          .set('X-Api-Key', merchant.testKey)
          .set('Idempotency-Key', key)
          .set('Content-Type', 'application/json')
          .send(
            `{"out_trade_no":"FP_${key.slice(0, 8)}","amount":1,"currency":"USD","subject":"s","metadata":${metadata}}`,
          );
      expectError(await send('1.5'), 400, 'parameter_invalid', 'metadata');
      expectError(await send('{"fraction":"1.5"}'), 400, 'idempotency_error', 'Idempotency-Key');
    });

    it('refuses a fraction in metadata, and leaves numbers inside strings alone', async () => {
      const fraction = await postOrder(JSON.stringify(orderBody()).replace(/}$/, ',"metadata":{"rate":1.5}}'));
      expectError(fraction, 400, 'parameter_invalid', 'metadata');
      const inString = await postOrder(orderBody({ subject: 'Plan 2.5e3 "x" 1.0', metadata: { rate: '1.5' } }));
      expectSuccess(inString, 201);
      expect(inString.body.data.subject).toBe('Plan 2.5e3 "x" 1.0');
    });

    it('counts metadata and URL lengths in code points, as the database does', async () => {
      const create = (overrides: Record<string, unknown>) => postOrder(orderBody(overrides));
      const emoji = '\u{1F600}';
      expectSuccess(await create({ metadata: { [emoji.repeat(40)]: emoji.repeat(500) } }), 201);
      expectError(await create({ metadata: { [emoji.repeat(41)]: 'v' } }), 400, 'parameter_invalid', 'metadata');
      expectError(await create({ metadata: { k: emoji.repeat(501) } }), 400, 'parameter_invalid', 'metadata');
      // A URL is ASCII (an emoji is percent-encoded), so its characters are its bytes.
      const url = (length: number) => `https://merchant.example/%F0%9F%98%80${'a'.repeat(length - 37)}`;
      expect(url(2048)).toHaveLength(2048);
      expectSuccess(await create({ return_url: url(2048) }), 201);
      expectError(await create({ return_url: url(2049) }), 400, 'parameter_invalid', 'return_url');
      expectError(
        await create({ return_url: `https://merchant.example/${emoji}` }),
        400,
        'parameter_invalid',
        'return_url',
      );
    });

    it('names the path parameter that holds a NUL, answers a malformed encoding 400 and a long id 404', async () => {
      const get = (path: string) => t.http().get(path).set('X-Api-Key', merchant.testKey);
      expectError(await get('/v1/orders/ord_x%00'), 400, 'parameter_invalid', 'id');
      expectError(await get('/v1/orders/%zz'), 400, 'malformed_request');
      expectError(await get(`/v1/orders/ord_${'a'.repeat(200)}`), 404, 'resource_missing', 'id');
    });

    it('counts characters as the database does: 200 letters and U+FE0F is 201', async () => {
      const admin = () => t.http().post('/v1/admin/merchants').set('Authorization', `Bearer ${ADMIN_TOKEN}`);
      expectError(await admin().send({ name: `${'a'.repeat(200)}\ufe0f` }), 400, 'parameter_invalid', 'name');
      // 200 characters outside the BMP are 400 UTF-16 units, and fit.
      expectSuccess(await admin().send({ name: '\u{1F600}'.repeat(200) }), 201);
      const order = await postOrder(orderBody({ subject: `${'s'.repeat(256)}\ufe0f` }));
      expectError(order, 400, 'parameter_invalid', 'subject');
    });
  });
});
