import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { createMerchant, orderBody } from './support/factories';
import { startServerProcess } from './support/server-process';
import { startTestApp, TestApp } from './support/test-app';

describe('structured logs (docs/operations.md)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('logs one JSON line per request with its id, merchant and idempotency outcome, and no credentials', async () => {
    const { id: merchantId, testKey } = await createMerchant(t);
    const server = await startServerProcess({ DATABASE_URL: t.db.url, ADMIN_TOKEN: 'logging-admin-token-0123456789' });
    try {
      const key = randomUUID();
      const body = orderBody();
      const send = () =>
        request(server.url).post('/v1/orders').set('X-Api-Key', testKey).set('Idempotency-Key', key).send(body);
      const first = await send().expect(201);
      const replay = await send().expect(201);
      await request(server.url)
        .post('/v1/admin/merchants')
        .set('Authorization', 'Bearer logging-admin-token-0123456789')
        .send({ name: 'L' })
        .expect(201);
      // A confused client puts its key in the query string: refused, and not logged.
      await request(server.url).get(`/v1/orders?limit=2&api_key=${testKey}`).set('X-Api-Key', testKey).expect(400);
      // Or pastes it, or the admin token, where an id goes.
      await request(server.url).get(`/v1/orders/${testKey}`).set('X-Api-Key', testKey).expect(404);
      await request(server.url).get(`/v1/orders?out_trade_no=${testKey}`).set('X-Api-Key', testKey).expect(404);
      await request(server.url)
        .get('/v1/admin/merchants/logging-admin-token-0123456789')
        .set('Authorization', 'Bearer logging-admin-token-0123456789')
        .expect(404);
      await server.kill('SIGTERM');

      const lines = server.stdout.map((line) => JSON.parse(line) as Record<string, unknown>);
      const completed = lines.filter((line) => line.msg === 'request completed');
      const executed = completed.find((line) => line.request_id === first.headers['x-request-id']);
      expect(executed).toMatchObject({
        level: 'info',
        method: 'POST',
        url: '/v1/orders',
        status: 201,
        merchant_id: merchantId,
        environment: 'test',
        idempotency: 'executed',
      });
      const replayed = completed.find((line) => line.idempotency === 'replayed');
      expect(replayed).toMatchObject({ original_request_id: first.headers['x-request-id'], status: 201 });
      expect(replayed!.request_id).not.toBe(first.headers['x-request-id']);
      expect(replay.headers['x-request-id']).toBe(first.headers['x-request-id']);

      expect(completed.find((line) => line.status === 400)).toMatchObject({
        url: '/v1/orders?limit=2&api_key=[redacted]',
        error: 'parameter_unknown',
      });

      expect(completed.find((line) => line.status === 404)).toMatchObject({ url: '/v1/orders/kuko_test_[redacted]' });

      const everything = server.stdout.join('\n');
      expect(everything).not.toContain(testKey);
      expect(everything).not.toContain('logging-admin-token-0123456789');
    } finally {
      await server.kill();
    }
  });
});
