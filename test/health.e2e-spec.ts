import { startClusterProcess } from './support/cluster-client.cjs';
import { createTestDatabase } from './support/database';
import { expectError, expectSuccess } from './support/expect-error';
import { createMerchant } from './support/factories';
import { startTestApp } from './support/test-app';

describe('health and a lost database (docs/operations.md)', () => {
  it('reports ready, then 503 everywhere the database is needed once it is gone', async () => {
    // A cluster of this test's own: stopping it disturbs nothing else.
    const cluster = await startClusterProcess('health');
    const db = await createTestDatabase(cluster.url);
    const t = await startTestApp({}, db);
    try {
      const merchant = await createMerchant(t);
      const ready = await t.http().get('/health/ready');
      expectSuccess(ready, 200);
      expect(ready.body.data.status).toBe('ok');

      await db.pool.end();
      await cluster.stop();

      expectSuccess(await t.http().get('/health'), 200);
      const notReady = await t.http().get('/health/ready');
      expectError(notReady, 503, 'service_unavailable');
      expect(notReady.headers['retry-after']).toBe('1');
      // Refused at once, and said so: not "did not answer in time".
      expect(notReady.body.message).toBe(
        'The database refused the connection: it is not running, or not listening at the configured address.',
      );

      const api = await t.http().get('/v1/account').set('X-Api-Key', merchant.testKey);
      expectError(api, 503, 'service_unavailable');
      expect(api.body.type).toBe('api_error');
    } finally {
      await t.app.close();
      await cluster.stop();
    }
  });

  // Directly only: behind PgBouncer, a refused server login is the pooler's to answer, at
  // once (1.24) or after its own retries, about a minute (1.18 with a wildcard database);
  // pg-errors.spec.ts covers its words.
  const direct = process.env.KUKO_TEST_POOLER === undefined;
  (direct ? it : it.skip)(
    'answers 503, and readiness says why, when the database refuses new connections while serving',
    async () => {
      // Here the database is dropped; a password rotated on one side only, or a certificate
      // that expired, refuses new connections the same way: the request ran nothing.
      const db = await createTestDatabase();
      const t = await startTestApp({}, db);
      try {
        const merchant = await createMerchant(t);
        await db.drop();

        // The first may meet a pooled connection the drop ended; the next ones need new ones.
        for (let attempt = 0; attempt < 3; attempt += 1) {
          const api = await t.http().get('/v1/account').set('X-Api-Key', merchant.testKey);
          expectError(api, 503, 'service_unavailable');
          expect(api.headers['retry-after']).toBe('1');
          if (attempt > 0) expect(api.body.message).toMatch(/^The database refused this service's connection/);
        }
        const notReady = await t.http().get('/health/ready');
        expectError(notReady, 503, 'service_unavailable');
        expect(notReady.body.message).toMatch(/^The database refused this service's credentials or database name/);
      } finally {
        await t.app.close();
      }
    },
  );
});
