import { connect } from 'node:net';
import request from 'supertest';
import { createMerchant, orderBody, TestMerchant } from './support/factories';
import { injectFault } from './support/faults';
import { startServerProcess } from './support/server-process';
import { startTestApp, TestApp } from './support/test-app';
import { SECRET, WEBHOOK_ENV, paymentSucceeded } from './support/webhooks';
import { Webhook } from 'standardwebhooks';

const ADMIN = 'logs-admin-token-0123456789';

/** Sends bytes as they are; resolves with what came back once the server closed, or after `closeAfterMs`. */
function rawRequest(port: number, bytes: string, closeAfterMs?: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    const received: Buffer[] = [];
    socket.on('data', (chunk) => received.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(Buffer.concat(received).toString('latin1')));
    if (closeAfterMs !== undefined) setTimeout(() => socket.destroy(), closeAfterMs);
  });
}

describe('logs an operator can read (docs/operations.md)', () => {
  let t: TestApp;
  let merchant: TestMerchant;

  beforeAll(async () => {
    t = await startTestApp();
    merchant = await createMerchant(t);
  });
  afterAll(() => t.close());

  const signedPayment = (orderId: string) => {
    const event = paymentSucceeded(orderId);
    const raw = JSON.stringify(event);
    const now = new Date();
    return {
      raw,
      headers: {
        'Content-Type': 'application/json',
        'webhook-id': event.id,
        'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
        'webhook-signature': new Webhook(SECRET).sign(event.id, now, raw),
      },
    };
  };

  it('JSON: one start-up summary, Nest chatter at debug, the error code on every 4xx, stacks for faults', async () => {
    // A password in the URL (ignored by a trust server, real for the embedded one) must never be printed.
    const url = new URL(t.db.url);
    if (!url.password) url.password = 'not-a-real-password-42';
    const env = {
      ...WEBHOOK_ENV,
      DATABASE_URL: url.toString(),
      ADMIN_TOKEN: ADMIN,
      HOST: '127.0.0.1',
      NOTIFY_WORKERS: 'off',
    };
    const server = await startServerProcess(env);
    let restore: (() => Promise<void>) | null = null;
    try {
      await request(server.url).get('/v1/orders/ord_missing').set('X-Api-Key', merchant.testKey).expect(404);
      const delivery = signedPayment('ord_0000000000000000000000000000dead');
      await request(server.url).post('/v1/webhooks/kukopay').set(delivery.headers).send(delivery.raw).expect(503);
      restore = await injectFault(t.db.pool, 'orders', `RAISE EXCEPTION 'injected fault';`);
      await request(server.url).post('/v1/orders').set('X-Api-Key', merchant.testKey).send(orderBody()).expect(500);
      await restore();
      // A lock wait that outlasted lock_timeout: load shed as designed, not a fault.
      restore = await injectFault(t.db.pool, 'orders', `RAISE EXCEPTION 'lock wait' USING ERRCODE = '55P03';`);
      await request(server.url).post('/v1/orders').set('X-Api-Key', merchant.testKey).send(orderBody()).expect(503);
      await restore();
      // A statement cut off by statement_timeout: a defect (a bad plan), logged as a fault.
      restore = await injectFault(t.db.pool, 'orders', `RAISE EXCEPTION 'cut off' USING ERRCODE = '57014';`);
      await request(server.url).post('/v1/orders').set('X-Api-Key', merchant.testKey).send(orderBody()).expect(503);
      // One request the HTTP parser refuses, one whose client goes away in the middle of its body.
      const port = Number(new URL(server.url).port);
      const refused = await rawRequest(port, 'GET /health HTTP/1.1\r\nHost: x\r\nX-Bad: a\x7fb\r\n\r\n');
      const refusedId = /X-Request-Id: (req_[0-9a-f]{32})/.exec(refused)![1];
      await rawRequest(
        port,
        'POST /v1/orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{"ou',
        200,
      );
      await server.kill('SIGTERM');

      const lines = server.stdout
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      const info = lines.filter((line) => line.level === 'info');
      // Nest's start-up messages (modules, routes) are below info.
      const framework = ['InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestFactory', 'NestApplication'];
      expect(info.filter((line) => framework.includes(line.context as string))).toEqual([]);
      const summaries = info.filter((line) => String(line.msg).startsWith('Listening on'));
      expect(summaries).toHaveLength(1);
      expect(summaries[0]).toMatchObject({
        host: '127.0.0.1',
        database: `${url.username}@${url.hostname}:${url.port}${url.pathname}`,
        webhook_providers: ['kukopay'],
        notifications_delivering: false,
      });
      expect(summaries[0].msg).toContain(`bound to 127.0.0.1:${new URL(server.url).port}`);
      expect(summaries[0].msg).toContain('webhooks: kukopay (test+live)');
      expect(summaries[0].msg).toContain('notifications: not delivering (NOTIFY_WORKERS=off');
      expect(server.stdout.join('\n')).not.toContain(url.password);

      const completed = (status: number) =>
        lines.filter((line) => line.msg === 'request completed' && line.status === status);
      expect(completed(404)).toEqual([expect.objectContaining({ level: 'info', error: 'resource_missing' })]);
      expect(completed(503)).toEqual([
        expect.objectContaining({ level: 'warn', error: 'resource_not_ready' }),
        expect.objectContaining({ level: 'warn', error: 'service_unavailable', database_busy: 'lock_timeout' }),
        expect.objectContaining({ level: 'error', error: 'service_unavailable' }),
      ]);
      expect(completed(503)[2]).not.toHaveProperty('database_busy');
      expect(completed(500)).toEqual([expect.objectContaining({ level: 'error', error: 'internal_error' })]);
      // Both are the client's doing: info, no stack; the refused one under the id its client got.
      expect(completed(400)).toEqual([
        expect.objectContaining({ level: 'info', error: 'malformed_request', request_id: refusedId }),
        expect.objectContaining({ level: 'info', error: 'malformed_request', method: 'POST', url: '/v1/orders' }),
      ]);
      // Only the faults have a stack (not the busy database's 503), on the line the filter writes for each.
      const withStack = lines.filter((line) => JSON.stringify(line).includes('"stack"'));
      expect(withStack).toEqual([
        expect.objectContaining({ level: 'error', msg: 'request failed', request_id: completed(500)[0].request_id }),
        expect.objectContaining({ level: 'error', msg: 'request failed', request_id: completed(503)[2].request_id }),
      ]);
      expect(JSON.stringify(withStack[0])).toContain('injected fault');
    } finally {
      await restore?.();
      await server.kill();
    }
  });

  it('LOG_FORMAT=pretty writes one readable line per event', async () => {
    const server = await startServerProcess({ DATABASE_URL: t.db.url, LOG_FORMAT: 'pretty' });
    try {
      await request(server.url).get('/v1/orders/ord_missing').set('X-Api-Key', merchant.testKey).expect(404);
      await request(server.url).get('/v1/account').set('X-Api-Key', merchant.testKey).expect(200);
      await server.kill('SIGTERM');
      const text = server.stdout.join('\n');
      expect(server.stdout.filter((line) => line.startsWith('{'))).toEqual([]);
      expect(text).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: \[Main\] Listening on http:\/\/localhost:\d+ /m);
      const time = String.raw`^\[\d\d:\d\d:\d\d\.\d{3}\]`;
      const missing = String.raw` INFO: request completed GET /v1/orders/ord_missing 404 resource_missing \{"request_id"`;
      expect(text).toMatch(new RegExp(time + missing, 'm'));
      expect(text).toMatch(/INFO: request completed GET \/v1\/account 200 \{.*"merchant_id":"mch_/);
    } finally {
      await server.kill();
    }
  });
});
