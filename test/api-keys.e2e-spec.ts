import { createHash, randomUUID } from 'node:crypto';
import { expectError, expectSuccess } from './support/expect-error';
import { createMerchant, orderBody } from './support/factories';
import { ADMIN_TOKEN, startTestApp, TestApp } from './support/test-app';

describe('rolling and revoking API keys (docs/operations.md)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const admin = (merchantId: string, action: 'roll' | 'revoke', body: object) =>
    t
      .http()
      .post(`/v1/admin/merchants/${merchantId}/api_keys/${action}`)
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
      .send(body);
  const account = (key: string) => t.http().get('/v1/account').set('X-Api-Key', key);
  /** The clock of a grace period: the old keys' expiry moved into the past, as time would. */
  const endGracePeriods = (merchantId: string) =>
    t.db.pool.query(
      `UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE merchant_id = $1 AND expires_at IS NOT NULL`,
      [merchantId],
    );

  it('rolls a key: the new one is shown once, the old one works until its grace period ends', async () => {
    const merchant = await createMerchant(t);
    const response = await admin(merchant.id, 'roll', { environment: 'test', expires_in: 3600 });
    expectSuccess(response, 200);
    const rolled = response.body.data;
    expect(rolled).toMatchObject({ object: 'api_key', merchant_id: merchant.id, environment: 'test' });
    expect(rolled.api_key).toMatch(/^kuko_test_[A-Za-z0-9_-]{32}$/);
    const expiresIn = (Date.parse(rolled.previous_keys_expire_at) - Date.now()) / 1000;
    expect(expiresIn).toBeGreaterThan(3500);
    expect(expiresIn).toBeLessThanOrEqual(3600);

    // Stored as a hash only.
    const { rows } = await t.db.pool.query('SELECT key_hash FROM api_keys WHERE merchant_id = $1', [merchant.id]);
    expect(rows).toHaveLength(3);
    expect(JSON.stringify(rows)).not.toContain(rolled.api_key.slice(10));
    expect(rows.some((row) => row.key_hash.equals(createHash('sha256').update(rolled.api_key).digest()))).toBe(true);

    // Within the grace period both keys work.
    expect((await account(merchant.testKey).expect(200)).body.data.environment).toBe('test');
    await account(rolled.api_key).expect(200);
    await endGracePeriods(merchant.id);
    expectError(await account(merchant.testKey), 401, 'api_key_invalid', 'X-Api-Key');
    await account(rolled.api_key).expect(200);
    // The other environment is untouched.
    await account(merchant.liveKey).expect(200);
  });

  it('with no expires_in the old key stops at once', async () => {
    const merchant = await createMerchant(t);
    const rolled = (await admin(merchant.id, 'roll', { environment: 'live' }).expect(200)).body.data;
    expect(rolled.api_key).toMatch(/^kuko_live_/);
    expectError(await account(merchant.liveKey), 401, 'api_key_invalid', 'X-Api-Key');
    expect((await account(rolled.api_key).expect(200)).body.data.environment).toBe('live');
    await account(merchant.testKey).expect(200);
  });

  it('revokes every key of an environment, grace periods included; a replay under a revoked key is 401', async () => {
    const merchant = await createMerchant(t);
    const key = randomUUID();
    const body = orderBody();
    const create = (apiKey: string) =>
      t.http().post('/v1/orders').set('X-Api-Key', apiKey).set('Idempotency-Key', key).send(body);
    const first = await create(merchant.testKey).expect(201);
    const rolled = (await admin(merchant.id, 'roll', { environment: 'test', expires_in: 3600 }).expect(200)).body.data;

    const response = await admin(merchant.id, 'revoke', { environment: 'test' });
    expectSuccess(response, 200);
    expect(response.body.data).toEqual({
      object: 'api_key_revocation',
      merchant_id: merchant.id,
      environment: 'test',
      revoked: 2,
    });
    for (const revoked of [merchant.testKey, rolled.api_key]) {
      expectError(await create(revoked), 401, 'api_key_invalid', 'X-Api-Key');
      expectError(await account(revoked), 401, 'api_key_invalid', 'X-Api-Key');
    }
    await account(merchant.liveKey).expect(200);

    // A new key of the same merchant and environment gets the stored answer: keys are scoped there, not per API key.
    const fresh = (await admin(merchant.id, 'roll', { environment: 'test' }).expect(200)).body.data;
    expect(fresh.previous_keys_expire_at).toBeNull();
    const replay = await create(fresh.api_key).expect(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
    const { rows } = await t.db.pool.query('SELECT count(*)::int AS n FROM orders WHERE merchant_id = $1', [
      merchant.id,
    ]);
    expect(rows[0].n).toBe(1);
  });

  it('refuses bad requests and unknown merchants, changing nothing', async () => {
    const merchant = await createMerchant(t);
    expectError(await admin(merchant.id, 'roll', {}), 400, 'parameter_missing', 'environment');
    expectError(await admin(merchant.id, 'roll', { environment: 'prod' }), 400, 'parameter_invalid', 'environment');
    // null is not "absent" (docs/errors.md): it would stop the old keys at once.
    for (const expiresIn of [-1, 1.5, 31 * 86400, '60', null]) {
      const response = await admin(merchant.id, 'roll', { environment: 'test', expires_in: expiresIn });
      expectError(response, 400, 'parameter_invalid', 'expires_in');
    }
    // A value of the wrong type is told its type, not the range.
    for (const expiresIn of ['10', true, 1.5, []]) {
      const response = await admin(merchant.id, 'roll', { environment: 'test', expires_in: expiresIn });
      expect(response.body.message).toBe('expires_in must be a whole number of seconds');
    }
    const unknown = await admin(merchant.id, 'revoke', { environment: 'test', extra: 1 });
    expectError(unknown, 400, 'parameter_unknown', 'extra');
    expectError(await admin('mch_missing', 'roll', { environment: 'test' }), 404, 'resource_missing', 'id');
    expectError(await admin('mch_missing', 'revoke', { environment: 'test' }), 404, 'resource_missing', 'id');
    expectError(
      await t.http().post(`/v1/admin/merchants/${merchant.id}/api_keys/revoke`).send({ environment: 'test' }),
      401,
      'api_key_missing',
      'Authorization',
    );
    const { rows } = await t.db.pool.query(
      `SELECT count(*)::int AS n FROM api_keys
        WHERE merchant_id = $1 AND (revoked_at IS NOT NULL OR expires_at IS NOT NULL)`,
      [merchant.id],
    );
    expect(rows[0].n).toBe(0);
    await account(merchant.testKey).expect(200);
  });

  it('serialises concurrent rolls of one merchant: every old key gets an expiry, every new key works', async () => {
    const merchant = await createMerchant(t);
    const rolls = await Promise.all(
      Array.from({ length: 5 }, () => admin(merchant.id, 'roll', { environment: 'test', expires_in: 60 })),
    );
    const keys = rolls.map((response) => response.body.data.api_key as string);
    expect(new Set(keys).size).toBe(5);
    const { rows } = await t.db.pool.query(
      `SELECT count(*) FILTER (WHERE expires_at IS NULL)::int AS unexpiring, count(*)::int AS total
         FROM api_keys WHERE merchant_id = $1 AND environment = 'test'`,
      [merchant.id],
    );
    // Exactly the last roll's key has no expiry; the original and four rolled keys are in their grace period.
    expect(rows[0]).toEqual({ unexpiring: 1, total: 6 });
  });
});
