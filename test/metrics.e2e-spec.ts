import { randomUUID } from 'node:crypto';
import { IdempotencyPurgeScheduler } from '../src/idempotency/idempotency-purge.scheduler';
import { expectError } from './support/expect-error';
import { createMerchant, createOrder, orderBody, TestMerchant } from './support/factories';
import { delta, scrape, Scrape } from './support/metrics';
import { ADMIN_TOKEN, startTestApp, TestApp } from './support/test-app';
import { deliverEvent, paymentSucceeded, SECRET, WEBHOOK_ENV } from './support/webhooks';

const METRICS_TOKEN = 'metrics-token-0123456789';

describe('GET /metrics (docs/operations.md)', () => {
  let t: TestApp;
  let merchant: TestMerchant;

  beforeAll(async () => {
    t = await startTestApp({ ...WEBHOOK_ENV, METRICS_TOKEN, IDEMPOTENCY_PURGE_CRON: 'off' });
    merchant = await createMerchant(t);
  });
  afterAll(() => t.close());

  const requests = (method: string, route: string, status: number) =>
    `kukopay_http_requests_total{method="${method}",route="${route}",status="${status}"}`;
  const durations = (method: string, route: string, status: number) =>
    `kukopay_http_request_duration_seconds_count{method="${method}",route="${route}",status="${status}"}`;

  it('asks for METRICS_TOKEN when one is set', async () => {
    expectError(await t.http().get('/metrics'), 401, 'api_key_missing', 'Authorization');
    const wrong = await t.http().get('/metrics').set('Authorization', 'Bearer wrong-token-0123456789');
    expectError(wrong, 401, 'api_key_invalid', 'Authorization');
    const open = await startTestApp({}, t.db);
    try {
      const response = await open.http().get('/metrics').expect(200);
      expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    } finally {
      await open.close();
    }
  });

  it('counts a walk-through by route template, status and outcome, by exactly the right amounts', async () => {
    const before = await scrape(t, METRICS_TOKEN);

    // 2 creates that execute, 1 replay, 1 mismatch (400), 2 reads of a missing order (404).
    const key = randomUUID();
    const body = orderBody();
    const keyed = (payload: object) =>
      t.http().post('/v1/orders').set('X-Api-Key', merchant.testKey).set('Idempotency-Key', key).send(payload);
    const created = await keyed(body).expect(201);
    await keyed(body).expect(201);
    await keyed({ ...body, amount: 1 }).expect(400);
    const order = await createOrder(t, merchant.testKey);
    await t.http().get('/v1/orders/ord_missing').set('X-Api-Key', merchant.testKey).expect(404);
    await t.http().get('/v1/orders/ord_missing2').set('X-Api-Key', merchant.testKey).expect(404);
    await t.http().get(`/v1/orders/${created.body.data.id}`).set('X-Api-Key', merchant.testKey).expect(200);
    // 1 wrong key; webhooks: processed, duplicate, a bad signature, an unknown provider (not a series).
    await t
      .http()
      .get('/v1/account')
      .set('X-Api-Key', `kuko_test_${'A'.repeat(32)}`)
      .expect(401);
    const payment = paymentSucceeded(order.id);
    await deliverEvent(t, payment).expect(200);
    await deliverEvent(t, payment).expect(200);
    const otherSecret = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;
    await deliverEvent(t, paymentSucceeded(order.id), { secret: otherSecret }).expect(400);
    await deliverEvent(t, paymentSucceeded(order.id), { provider: 'unknown-provider', secret: SECRET }).expect(404);
    await t
      .http()
      .post('/v1/admin/merchants')
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
      .send({ name: 'M' })
      .expect(201);

    const after = await scrape(t, METRICS_TOKEN);
    const moved = (series: string) => delta(before, after, series);
    expect({
      creates: moved(requests('POST', '/v1/orders', 201)),
      refused: moved(requests('POST', '/v1/orders', 400)),
      missing: moved(requests('GET', '/v1/orders/:id', 404)),
      read: moved(requests('GET', '/v1/orders/:id', 200)),
      unauthorised: moved(requests('GET', '/v1/account', 401)),
      webhooks200: moved(requests('POST', '/v1/webhooks/:provider', 200)),
      webhooks400: moved(requests('POST', '/v1/webhooks/:provider', 400)),
      webhooks404: moved(requests('POST', '/v1/webhooks/:provider', 404)),
      admin: moved(requests('POST', '/v1/admin/merchants', 201)),
      scrapes: moved(requests('GET', '/metrics', 200)),
      createLatencies: moved(durations('POST', '/v1/orders', 201)),
      executed: moved('kukopay_idempotency_outcomes_total{outcome="executed"}'),
      replayed: moved('kukopay_idempotency_outcomes_total{outcome="replayed"}'),
      mismatch: moved('kukopay_idempotency_outcomes_total{outcome="mismatch"}'),
      processed: moved('kukopay_webhook_events_total{provider="kukopay",outcome="processed"}'),
      duplicate: moved('kukopay_webhook_events_total{provider="kukopay",outcome="duplicate"}'),
      badSignature: moved('kukopay_webhook_events_total{provider="kukopay",outcome="webhook_signature_invalid"}'),
      authFailures: moved('kukopay_auth_failures_total{credential="api_key",status="401"}'),
    }).toEqual({
      creates: 3, // the keyed create, its replay, and createOrder's
      refused: 1,
      missing: 2,
      read: 1,
      unauthorised: 1,
      webhooks200: 2,
      webhooks400: 1,
      webhooks404: 1,
      admin: 1,
      scrapes: 1, // the first scrape; this one is counted once it is answered
      createLatencies: 3,
      executed: 1,
      replayed: 1,
      mismatch: 1,
      processed: 1,
      duplicate: 1,
      badSignature: 1,
      authFailures: 1,
    });

    // Bounded labels: templates, never ids or unknown names.
    const names = [...after.keys()].join('\n');
    expect(names).not.toMatch(/ord_|mch_|evt_|unknown-provider|kuko_/);
    // Node's default process metrics and the pool's counters.
    const defaults = ['process_cpu_user_seconds_total', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes'];
    for (const series of defaults) {
      expect(after.has(series)).toBe(true);
    }
    expect(after.get('kukopay_db_pool_size')).toBe(20);
    expect(after.get('kukopay_db_pool_waiting_clients')).toBe(0);
    // The requests above opened connections; the scrape itself reads the purge backlog,
    // so at most that one is in use.
    const total = after.get('kukopay_db_pool_total_connections')!;
    expect(total).toBeGreaterThanOrEqual(1);
    expect(total).toBeLessThanOrEqual(20);
    expect(after.get('kukopay_db_pool_idle_connections')).toBeGreaterThanOrEqual(total - 1);
  });

  // Behind a transaction pooler the server's connections are PgBouncer's, not the pool's.
  const direct = process.env.KUKO_TEST_POOLER === undefined;
  (direct ? it : it.skip)('counts a connection the server ended as gone from the pool', async () => {
    await Promise.all(Array.from({ length: 4 }, () => t.http().get('/v1/account').set('X-Api-Key', merchant.testKey)));
    const before = (await scrape(t, METRICS_TOKEN)).get('kukopay_db_pool_total_connections')!;
    expect(before).toBeGreaterThanOrEqual(2);

    const { rows } = await t.db.pool.query(
      `SELECT count(pg_terminate_backend(pid))::int AS ended FROM pg_stat_activity
        WHERE application_name = 'kukopay-api' AND datname = current_database() AND state = 'idle'`,
    );
    expect(rows[0].ended).toBeGreaterThanOrEqual(1);
    await new Promise((settle) => setTimeout(settle, 200));
    const after = await scrape(t, METRICS_TOKEN);
    // The scrape's own read of the purge backlog may have opened one anew.
    expect(after.get('kukopay_db_pool_total_connections')).toBeLessThanOrEqual(before - rows[0].ended + 1);
    expect(after.get('kukopay_db_pool_idle_connections')).toBeLessThanOrEqual(
      after.get('kukopay_db_pool_total_connections')!,
    );
  });

  it('reports the purge: rows deleted, runs, last run, and the backlog seen from the table', async () => {
    await t.db.pool.query(
      `INSERT INTO idempotency_keys (merchant_id, environment, key, method, path, fingerprint,
                                     response_status, response_body, request_id, expires_at)
       SELECT $1, 'test', 'expired-' || g, 'POST', '/v1/orders', '\\x00', 201, '{}', 'req_' || g,
              now() - interval '90 seconds'
         FROM generate_series(1, 3) AS g`,
      [merchant.id],
    );
    const before: Scrape = await scrape(t, METRICS_TOKEN);
    expect(before.get('kukopay_idempotency_oldest_expired_key_age_seconds')).toBeGreaterThanOrEqual(90);

    // The scheduler's tick, as its cron would run it.
    await (t.app.get(IdempotencyPurgeScheduler) as unknown as { tick(): Promise<void> }).tick();
    const after = await scrape(t, METRICS_TOKEN);
    expect(delta(before, after, 'kukopay_idempotency_purge_deleted_rows_total')).toBe(3);
    expect(delta(before, after, 'kukopay_idempotency_purge_runs_total{result="finished"}')).toBe(1);
    const lastSuccess = after.get('kukopay_idempotency_purge_last_success_timestamp_seconds');
    expect(lastSuccess).toBeGreaterThan(Date.now() / 1000 - 60);
    expect(after.get('kukopay_idempotency_oldest_expired_key_age_seconds')).toBe(0);
  });
});
