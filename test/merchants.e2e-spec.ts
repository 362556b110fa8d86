import { createHash } from 'node:crypto';
import { expectError, expectSuccess } from './support/expect-error';
import { createMerchant } from './support/factories';
import { ADMIN_TOKEN, startTestApp, TestApp } from './support/test-app';

describe('merchants and API keys', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('creates a merchant with a test and a live key, stored only as hashes', async () => {
    const response = await t
      .http()
      .post('/v1/admin/merchants')
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
      .send({ name: 'Acme' });
    expectSuccess(response, 201);
    const { id, name, api_keys } = response.body.data;
    expect(id).toMatch(/^mch_[0-9a-f]{32}$/);
    expect(name).toBe('Acme');
    expect(api_keys.test).toMatch(/^kuko_test_[A-Za-z0-9_-]{32}$/);
    expect(api_keys.live).toMatch(/^kuko_live_[A-Za-z0-9_-]{32}$/);

    const { rows } = await t.db.pool.query('SELECT environment, key_hash FROM api_keys WHERE merchant_id = $1', [id]);
    expect(rows).toHaveLength(2);
    const stored = JSON.stringify(rows);
    expect(stored).not.toContain(api_keys.test.slice(10));
    const testRow = rows.find((row) => row.environment === 'test');
    expect(testRow.key_hash.equals(createHash('sha256').update(api_keys.test).digest())).toBe(true);
  });

  it('refuses a missing or wrong admin token', async () => {
    const post = () => t.http().post('/v1/admin/merchants').send({ name: 'Acme' });
    expectError(await post(), 401, 'api_key_missing', 'Authorization');
    expectError(
      await post().set('Authorization', 'Bearer wrong-token-0123456789'),
      401,
      'api_key_invalid',
      'Authorization',
    );
    expectError(await post().set('Authorization', `Basic ${ADMIN_TOKEN}`), 401, 'api_key_invalid', 'Authorization');
  });

  it('takes the Bearer scheme in any case (RFC 9110 §11.1)', async () => {
    for (const scheme of ['bearer', 'BEARER']) {
      const response = await t
        .http()
        .post('/v1/admin/merchants')
        .set('Authorization', `${scheme} ${ADMIN_TOKEN}`)
        .send({ name: 'Any case' });
      expectSuccess(response, 201);
    }
  });

  it('hides the admin API when no ADMIN_TOKEN is configured', async () => {
    const closed = await startTestApp({ ADMIN_TOKEN: '' }, t.db);
    try {
      const response = await closed
        .http()
        .post('/v1/admin/merchants')
        .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
        .send({ name: 'Acme' });
      expectError(response, 404, 'route_not_found');
      // Exactly like an unknown URL, whatever the body, spelling or method.
      const post = (path: string, contentType: string, body: string) =>
        closed.http().post(path).set('Content-Type', contentType).send(body);
      for (const path of ['/v1/admin/merchants', '/v1/%61dmin/merchants', '/v1/admin/merchants/mch_x/api_keys/roll']) {
        expectError(await post(path, 'application/json', '{"name":'), 404, 'route_not_found');
        expectError(await post(path, 'text/plain', 'hello'), 404, 'route_not_found');
        expectError(await post(path, 'application/json', 'a'.repeat(70_000)), 404, 'route_not_found');
      }
      expectError(await closed.http().get('/v1/admin/merchants'), 404, 'route_not_found');
    } finally {
      await closed.close();
    }
  });

  it('sets the environment from the key prefix', async () => {
    const merchant = await createMerchant(t);
    const test = await t.http().get('/v1/account').set('X-Api-Key', merchant.testKey).expect(200);
    const live = await t.http().get('/v1/account').set('X-Api-Key', merchant.liveKey).expect(200);
    expect(test.body.data).toMatchObject({ id: merchant.id, environment: 'test' });
    expect(live.body.data).toMatchObject({ id: merchant.id, environment: 'live' });
  });

  it('refuses a missing, malformed, unknown or revoked key with 401', async () => {
    const merchant = await createMerchant(t);
    const get = () => t.http().get('/v1/account');
    expectError(await get(), 401, 'api_key_missing', 'X-Api-Key');
    expectError(await get().set('X-Api-Key', 'sk_test_123'), 401, 'api_key_invalid', 'X-Api-Key');
    expectError(await get().set('X-Api-Key', `kuko_test_${'A'.repeat(32)}`), 401, 'api_key_invalid', 'X-Api-Key');
    // Same random part, other environment: a different key.
    expectError(
      await get().set('X-Api-Key', merchant.testKey.replace('_test_', '_live_')),
      401,
      'api_key_invalid',
      'X-Api-Key',
    );

    await t.db.pool.query(`UPDATE api_keys SET revoked_at = now() WHERE merchant_id = $1 AND environment = 'test'`, [
      merchant.id,
    ]);
    expectError(await get().set('X-Api-Key', merchant.testKey), 401, 'api_key_invalid', 'X-Api-Key');
    await get().set('X-Api-Key', merchant.liveKey).expect(200);
  });
});
