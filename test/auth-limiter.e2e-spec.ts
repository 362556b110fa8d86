import { randomUUID } from 'node:crypto';
import { expectError } from './support/expect-error';
import { createMerchant, orderBody, TestMerchant } from './support/factories';
import { ADMIN_TOKEN, startTestApp, TestApp } from './support/test-app';

describe('repeated authentication failures from one address (docs/operations.md)', () => {
  let t: TestApp;
  let merchant: TestMerchant;

  beforeAll(async () => {
    t = await startTestApp();
    merchant = await createMerchant(t);
  });
  afterAll(() => t.close());

  const wrongKey = `kuko_test_${'B'.repeat(32)}`;

  it('answers 429 rate_limited with Retry-After after 20 failures a minute; valid credentials still pass', async () => {
    for (let i = 0; i < 20; i++) {
      expectError(await t.http().get('/v1/account').set('X-Api-Key', wrongKey), 401, 'api_key_invalid', 'X-Api-Key');
    }
    const limited = await t.http().get('/v1/account').set('X-Api-Key', wrongKey);
    expectError(limited, 429, 'rate_limited');
    expect(limited.body.type).toBe('rate_limit_error');
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);

    // Every credential counts towards the same address: a missing key, a wrong admin token.
    expectError(await t.http().get('/v1/account'), 429, 'rate_limited');
    const admin = () => t.http().post('/v1/admin/merchants').send({ name: 'X' });
    expectError(await admin().set('Authorization', 'Bearer wrong-admin-token-0123'), 429, 'rate_limited');

    // Valid credentials from the same address are served as usual, without delay.
    await t.http().get('/v1/account').set('X-Api-Key', merchant.testKey).expect(200);
    await admin().set('Authorization', `Bearer ${ADMIN_TOKEN}`).expect(201);

    // A keyed write refused this way stores nothing: a retry with a good key executes.
    const key = randomUUID();
    const body = orderBody();
    const create = (apiKey: string) =>
      t.http().post('/v1/orders').set('X-Api-Key', apiKey).set('Idempotency-Key', key).send(body);
    expectError(await create(wrongKey), 429, 'rate_limited');
    const created = await create(merchant.testKey).expect(201);
    expect(created.headers['idempotent-replayed']).toBeUndefined();
  });

  // Node would join the two lines into "k, k", which no key matches: a wrong key, counted.
  it('refuses X-Api-Key sent twice as such, without counting it as a failure', async () => {
    const other = await startTestApp({}, t.db);
    try {
      for (let i = 0; i < 25; i++) {
        const twice = await other
          .http()
          .get('/v1/account')
          .set({ 'X-Api-Key': [merchant.testKey, merchant.testKey] });
        expectError(twice, 401, 'api_key_invalid', 'X-Api-Key');
        expect(twice.body.message).toBe('The X-Api-Key header was sent 2 times; send it once.');
      }
      expectError(
        await other.http().get('/v1/account').set('X-Api-Key', wrongKey),
        401,
        'api_key_invalid',
        'X-Api-Key',
      );
      await other.http().get('/v1/account').set('X-Api-Key', merchant.testKey).expect(200);
    } finally {
      await other.close();
    }
  });

  // Node would keep the first line: a second one, even a wrong one, would go unseen.
  it('refuses Authorization sent twice on the admin API and /metrics, without counting it', async () => {
    const metricsToken = 'metrics-token-0123456789';
    const other = await startTestApp({ METRICS_TOKEN: metricsToken }, t.db);
    const merchants = async () => (await t.db.pool.query('SELECT count(*)::int AS n FROM merchants')).rows[0].n;
    const before = await merchants();
    try {
      const twice = (token: string) => ({ Authorization: [`Bearer ${token}`, `Bearer ${token}`] });
      for (let i = 0; i < 25; i++) {
        const admin = await other.http().post('/v1/admin/merchants').set(twice(ADMIN_TOKEN)).send({ name: 'X' });
        expectError(admin, 401, 'api_key_invalid', 'Authorization');
        expect(admin.body.message).toBe('The Authorization header was sent 2 times; send it once.');
      }
      expectError(await other.http().get('/metrics').set(twice(metricsToken)), 401, 'api_key_invalid', 'Authorization');
      const wrong = other.http().post('/v1/admin/merchants').set('Authorization', 'Bearer wrong-admin-token-0123');
      expectError(await wrong.send({ name: 'X' }), 401, 'api_key_invalid', 'Authorization');
      await other.http().get('/metrics').set('Authorization', `Bearer ${metricsToken}`).expect(200);
      expect(await merchants()).toBe(before);
    } finally {
      await other.close();
    }
  });

  it('is per instance: another instance on the same database still answers 401', async () => {
    const other = await startTestApp({}, t.db);
    try {
      const response = await other.http().get('/v1/account').set('X-Api-Key', wrongKey);
      expectError(response, 401, 'api_key_invalid', 'X-Api-Key');
    } finally {
      await other.close();
    }
  });
});
