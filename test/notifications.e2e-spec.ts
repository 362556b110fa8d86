import { randomUUID } from 'node:crypto';
import { expectError, expectSuccess } from './support/expect-error';
import { createMerchant, createPaidOrder, orderBody, TestMerchant } from './support/factories';
import { NOTIFY_ENV } from './support/notifications';
import { Receiver, signedBy, startReceiver, waitFor, waitForSettled } from './support/receiver';
import { delta, scrape } from './support/metrics';
import { startTestApp, TestApp } from './support/test-app';
import { deliverEvent, paymentSucceeded } from './support/webhooks';

const EVENT_KEYS = ['created_at', 'data', 'environment', 'id', 'object', 'type'];

describe('merchant notifications (docs/notifications.md)', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let receiver: Receiver;

  beforeAll(async () => {
    t = await startTestApp(NOTIFY_ENV);
    merchant = await createMerchant(t);
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  const api = (key = merchant.testKey) => ({
    get: (path: string) => t.http().get(path).set('X-Api-Key', key),
    post: (path: string, body?: object) => {
      const request = t.http().post(path).set('X-Api-Key', key);
      return body === undefined ? request : request.send(body);
    },
  });
  const createOrder = async (overrides: Record<string, unknown> = {}, key = merchant.testKey) => {
    const response = await api(key).post('/v1/orders', orderBody({ notify_url: receiver.url, ...overrides }));
    expectSuccess(response, 201);
    return response.body.data as { id: string; amount: number };
  };
  const pay = async (orderId: string) => {
    const response = await deliverEvent(t, paymentSucceeded(orderId));
    expect(response.body.data.status).toBe('processed');
  };
  const eventsOf = async (orderId: string) =>
    (await t.db.pool.query('SELECT * FROM events WHERE order_id = $1 ORDER BY created_at, id', [orderId])).rows;
  const receivedFor = (eventId: string) => receiver.received.filter((r) => r.headers['webhook-id'] === eventId);

  it('sends order.paid once, signed, with the order exactly as GET returned it', async () => {
    const order = await createOrder();
    await pay(order.id);
    const asGet = (await api().get(`/v1/orders/${order.id}`)).body.data;
    const [event] = await eventsOf(order.id);
    await waitFor(t.db.pool, `SELECT delivery_status = 'delivered' AS done FROM events WHERE id = $1`, [event.id]);

    const [delivery] = receivedFor(event.id);
    expect(receivedFor(event.id)).toHaveLength(1);
    expect(signedBy(delivery, merchant.secrets.test)).toBe(true);
    expect(signedBy(delivery, merchant.secrets.live)).toBe(false);
    expect(delivery.headers['content-type']).toBe('application/json');
    expect(delivery.headers['user-agent']).toMatch(/^KukoPay-Notifications\/\d+\.\d+\.\d+$/);
    const body = JSON.parse(delivery.body);
    expect(Object.keys(body).sort()).toEqual(EVENT_KEYS);
    expect(body).toEqual({
      id: event.id,
      object: 'event',
      type: 'order.paid',
      environment: 'test',
      created_at: event.created_at.toISOString(),
      data: { object: asGet },
    });
    // The body keeps the key order of the GET answer.
    expect(JSON.stringify(body.data.object)).toBe(JSON.stringify(asGet));
    expect(body.id).toMatch(/^evt_[0-9a-f]{32}$/);
  });

  it('sends order.closed for a close without an Idempotency-Key, with the order exactly as GET returned it', async () => {
    const order = await createOrder();
    const closed = await api().post(`/v1/orders/${order.id}/close`);
    expectSuccess(closed, 200);
    const asGet = (await api().get(`/v1/orders/${order.id}`)).body.data;
    expect(closed.body.data).toEqual(asGet);
    const [event] = await eventsOf(order.id);
    expect(event.type).toBe('order.closed');
    await waitFor(t.db.pool, `SELECT delivery_status = 'delivered' AS done FROM events WHERE id = $1`, [event.id]);
    const [delivery] = receivedFor(event.id);
    expect(receivedFor(event.id)).toHaveLength(1);
    expect(JSON.stringify(JSON.parse(delivery.body).data.object)).toBe(JSON.stringify(asGet));
  });

  it('records no second event for a duplicate webhook, a second payment event or a replayed close', async () => {
    const order = await createOrder();
    const event = paymentSucceeded(order.id);
    await deliverEvent(t, event);
    expect((await deliverEvent(t, event)).body.data.duplicate).toBe(true);
    expect((await deliverEvent(t, paymentSucceeded(order.id))).body.data.status).toBe('ignored');

    const open = await createOrder();
    const key = randomUUID();
    const close = () => api().post(`/v1/orders/${open.id}/close`).set('Idempotency-Key', key);
    expectSuccess(await close(), 200);
    const replay = await close();
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expectError(await api().post(`/v1/orders/${open.id}/close`), 400, 'order_not_closable', 'id');
    // The same out_trade_no again returns the order and records nothing.
    const again = await api().post(
      '/v1/orders',
      orderBody({ out_trade_no: (await eventsOf(order.id))[0].data.object.out_trade_no }),
    );
    expect(again.status).toBe(200);

    expect((await eventsOf(order.id)).map((e) => e.type)).toEqual(['order.paid']);
    const closed = await eventsOf(open.id);
    expect(closed.map((e) => e.type)).toEqual(['order.closed']);
    expect(closed[0].data.object.status).toBe('closed');
  });

  it('sends refund.succeeded and refund.failed with the refund as GET returns it, to the refund’s own URL', async () => {
    const own = await startReceiver();
    try {
      const order = await createOrder();
      await pay(order.id);
      const first = (await api().post('/v1/refunds', { order_id: order.id, amount: 100 })).body.data;
      const second = (await api().post('/v1/refunds', { order_id: order.id, amount: 200, notify_url: own.url })).body
        .data;
      expectSuccess(await api().post(`/v1/test_helpers/refunds/${first.id}/succeed`), 200);
      const failed = await api().post(`/v1/test_helpers/refunds/${second.id}/fail`);
      expectSuccess(failed, 200);
      expect(failed.body.data.status).toBe('failed');
      const again = await api().post(`/v1/test_helpers/refunds/${second.id}/fail`);
      expectError(again, 400, 'refund_not_pending', 'id');
      expect(again.body.message).toBe(`Only a pending refund can be settled; refund ${second.id} is failed.`);
      const { rows: helperEvents } = await t.db.pool.query(
        "SELECT type FROM webhook_events WHERE provider = 'test_helpers' AND payload->'data'->>'refund_id' = $1",
        [second.id],
      );
      expect(helperEvents.map((e) => e.type)).toEqual(['refund.failed']);
      await waitForSettled(t.db.pool);

      const events = await eventsOf(order.id);
      expect(events.map((e) => e.type)).toEqual(['order.paid', 'refund.succeeded', 'refund.failed']);
      const succeeded = JSON.parse(receivedFor(events[1].id)[0].body);
      expect(succeeded.data.object).toEqual((await api().get(`/v1/refunds/${first.id}`)).body.data);
      const fromOwn = own.received.filter((r) => r.headers['webhook-id'] === events[2].id);
      expect(fromOwn).toHaveLength(1);
      expect(JSON.parse(fromOwn[0].body).data.object).toEqual((await api().get(`/v1/refunds/${second.id}`)).body.data);
      expect(signedBy(fromOwn[0], merchant.secrets.test)).toBe(true);
      expect(receivedFor(events[2].id)).toHaveLength(0);
    } finally {
      await own.close();
    }
  });

  it('records an event without notify_url as no_destination and sends nothing', async () => {
    const response = await api().post('/v1/orders', orderBody());
    const id = response.body.data.id;
    await pay(id);
    const [event] = await eventsOf(id);
    expect(event.delivery_status).toBe('no_destination');
    const got = (await api().get(`/v1/events/${event.id}`)).body.data;
    expect(got.delivery).toEqual({ status: 'no_destination', attempts: 0, next_attempt_at: null, last_attempt: null });
    const { rows } = await t.db.pool.query(
      `SELECT 1 FROM graphile_worker._private_jobs WHERE payload->>'event_id' = $1`,
      [event.id],
    );
    expect(rows).toHaveLength(0);
    expectError(await api().post(`/v1/events/${event.id}/redeliver`), 400, 'event_not_deliverable', 'id');
  });

  it('lists, filters and pages events, shows delivery and attempts, and hides other merchants’ events', async () => {
    const other = await createMerchant(t, 'Other');
    const order = await createOrder();
    await pay(order.id);
    const closedOrder = await createOrder();
    await api().post(`/v1/orders/${closedOrder.id}/close`);
    await waitForSettled(t.db.pool);

    const page = (await api().get('/v1/events?limit=1')).body;
    expect(page.data).toHaveLength(1);
    expect(page.has_more).toBe(true);
    expect(page.data[0].type).toBe('order.closed');
    const next = (await api().get(`/v1/events?limit=1&starting_after=${page.data[0].id}`)).body;
    expect(next.data[0].type).toBe('order.paid');
    expect(next.data[0].data.object.id).toBe(order.id);

    const byOrder = (await api().get(`/v1/events?order_id=${order.id}`)).body.data;
    expect(byOrder.map((e: { type: string }) => e.type)).toEqual(['order.paid']);
    const byType = (await api().get('/v1/events?type=order.closed&limit=100')).body.data;
    expect(byType.every((e: { type: string }) => e.type === 'order.closed')).toBe(true);
    expectError(await api().get('/v1/events?type=order.unknown'), 400, 'parameter_invalid', 'type');
    // A cursor that does not match the filter still marks a position among the merchant's
    // events (here: the close, listed before the payment); another merchant's is unknown.
    const fromClose = (await api().get(`/v1/events?type=order.paid&starting_after=${page.data[0].id}`)).body;
    expect(fromClose.data[0].data.object.id).toBe(order.id);
    const othersCursor = api(other.testKey).get(`/v1/events?type=order.paid&starting_after=${page.data[0].id}`);
    expectError(await othersCursor, 404, 'resource_missing', 'starting_after');

    const id = byOrder[0].id;
    const event = await api().get(`/v1/events/${id}`);
    expectSuccess(event, 200);
    expect(event.body.data.delivery).toMatchObject({ status: 'delivered', attempts: 1, next_attempt_at: null });
    expect(event.body.data.delivery.last_attempt).toMatchObject({ status_code: 200, error: null });
    const attempts = (await api().get(`/v1/events/${id}/attempts`)).body.data;
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({
      url: receiver.url,
      status_code: 200,
      error: null,
      kind: 'scheduled',
      response_body: '{"ok":true}',
    });
    // The list is whole: a page size or cursor is refused rather than silently ignored.
    for (const query of ['limit=1', 'starting_after=x', 'expand=url']) {
      const [name] = query.split('=');
      expectError(await api().get(`/v1/events/${id}/attempts?${query}`), 400, 'parameter_unknown', name);
    }

    expectError(await api(other.testKey).get(`/v1/events/${id}`), 404, 'resource_missing', 'id');
    expectError(await api(merchant.liveKey).get(`/v1/events/${id}`), 404, 'resource_missing', 'id');
    expectError(await api(other.testKey).post(`/v1/events/${id}/redeliver`), 404, 'resource_missing', 'id');
    expect((await api(other.testKey).get('/v1/events')).body.data).toEqual([]);
  });

  it('redelivers on request (202, with Idempotency-Key): one more attempt, same webhook-id, fresh signature', async () => {
    const order = await createOrder();
    await pay(order.id);
    await waitForSettled(t.db.pool);
    const [event] = await eventsOf(order.id);
    const key = randomUUID();
    const first = await api().post(`/v1/events/${event.id}/redeliver`).set('Idempotency-Key', key);
    expectSuccess(first, 202);
    expect(first.body.data.id).toBe(event.id);
    const replay = await api().post(`/v1/events/${event.id}/redeliver`).set('Idempotency-Key', key);
    expect(replay.status).toBe(202);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    await waitFor(t.db.pool, 'SELECT attempts = 2 AS done FROM events WHERE id = $1', [event.id]);
    await new Promise((resolve) => setTimeout(resolve, 300));

    const deliveries = receivedFor(event.id);
    expect(deliveries).toHaveLength(2);
    expect(deliveries[1].body).toBe(deliveries[0].body);
    expect(signedBy(deliveries[1], merchant.secrets.test)).toBe(true);
    const attempts = (await api().get(`/v1/events/${event.id}/attempts`)).body.data;
    expect(attempts.map((a: { kind: string }) => a.kind)).toEqual(['scheduled', 'redelivery']);
  });

  it('redelivers a failed event: a 2xx makes it delivered, with a signature made at the new attempt', async () => {
    const recovering = await startReceiver((n) => ({ status: n < 3 ? 503 : 200 }));
    try {
      const order = await createOrder({ notify_url: recovering.url });
      await pay(order.id);
      const [event] = await eventsOf(order.id);
      await waitFor(t.db.pool, `SELECT delivery_status = 'failed' AS done FROM events WHERE id = $1`, [event.id]);
      await new Promise((resolve) => setTimeout(resolve, 1100)); // a later second for the new timestamp

      expectSuccess(await api().post(`/v1/events/${event.id}/redeliver`), 202);
      await waitFor(t.db.pool, `SELECT delivery_status = 'delivered' AS done FROM events WHERE id = $1`, [event.id]);
      const shown = (await api().get(`/v1/events/${event.id}`)).body.data;
      expect(shown.delivery).toMatchObject({ status: 'delivered', attempts: 4, next_attempt_at: null });
      const stamps = recovering.received.map((r) => Number(r.headers['webhook-timestamp']));
      expect(stamps).toHaveLength(4);
      expect(stamps[3]).toBeGreaterThan(stamps[0]);
      expect(signedBy(recovering.received[3], merchant.secrets.test)).toBe(true);
    } finally {
      await recovering.close();
    }
  });

  it('answers 404 to test helpers called with a live key', async () => {
    const live = await createOrder({ notify_url: 'https://merchant.example/notify' }, merchant.liveKey);
    expectError(await api(merchant.liveKey).post(`/v1/test_helpers/orders/${live.id}/pay`), 404, 'route_not_found');
    const { rows } = await t.db.pool.query('SELECT status FROM orders WHERE id = $1', [live.id]);
    expect(rows[0].status).toBe('pending');
  });

  it('pays an order through the test helper exactly as the webhook does', async () => {
    const order = await createOrder();
    const paid = await api().post(`/v1/test_helpers/orders/${order.id}/pay`).set('Idempotency-Key', randomUUID());
    expectSuccess(paid, 200);
    expect(paid.body.data).toMatchObject({ id: order.id, status: 'paid' });
    expect(paid.body.data).toEqual((await api().get(`/v1/orders/${order.id}`)).body.data);
    const { rows } = await t.db.pool.query('SELECT 1 FROM fulfillments WHERE order_id = $1', [order.id]);
    expect(rows).toHaveLength(1);
    expect((await eventsOf(order.id)).map((e) => e.type)).toEqual(['order.paid']);
    // Refused, with or without a key, it changes nothing: not even a webhook_events row.
    const helperEvents = async () =>
      (await t.db.pool.query("SELECT count(*)::int AS n FROM webhook_events WHERE provider = 'test_helpers'")).rows[0]
        .n;
    const before = await helperEvents();
    const refused = await api().post(`/v1/test_helpers/orders/${order.id}/pay`);
    expectError(refused, 400, 'order_not_payable', 'id');
    expect(refused.body.message).toBe(`Only a pending order can be paid; order ${order.id} is paid.`);
    const keyed = await api().post(`/v1/test_helpers/orders/${order.id}/pay`).set('Idempotency-Key', randomUUID());
    expectError(keyed, 400, 'order_not_payable', 'id');
    expect(await helperEvents()).toBe(before);
    expectError(
      await api().post('/v1/test_helpers/orders/ord_00000000000000000000000000000000/pay'),
      404,
      'resource_missing',
      'id',
    );
  });

  it('counts its attempts and its backlog on /metrics (docs/operations.md)', async () => {
    // An app of its own, so that no other test's events move the figures.
    const app = await startTestApp(NOTIFY_ENV);
    const failing = await startReceiver(() => ({ status: 503 }));
    try {
      const owner = await createMerchant(app);
      const before = await scrape(app);
      await createPaidOrder(app, owner.testKey, { notify_url: receiver.url });
      await createPaidOrder(app, owner.testKey, { notify_url: failing.url });
      await waitForSettled(app.db.pool);
      const after = await scrape(app);
      // One delivered at once; three failed attempts (the schedule's three slots) for the other.
      expect(delta(before, after, 'kukopay_notification_attempts_total{result="delivered"}')).toBe(1);
      expect(delta(before, after, 'kukopay_notification_attempts_total{result="failed"}')).toBe(3);
      expect(after.get('kukopay_notifications_pending')).toBe(0);
      expect(after.get('kukopay_notification_oldest_pending_age_seconds')).toBe(0);
    } finally {
      await failing.close();
      await app.close();
    }
  });

  it('shows events nobody delivers as a backlog on /metrics', async () => {
    const app = await startTestApp({ ...NOTIFY_ENV, NOTIFY_WORKERS: 'off' });
    try {
      const owner = await createMerchant(app);
      await createPaidOrder(app, owner.testKey, { notify_url: receiver.url });
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const series = await scrape(app);
      expect(series.get('kukopay_notifications_pending')).toBe(1);
      expect(series.get('kukopay_notification_oldest_pending_age_seconds')).toBeGreaterThanOrEqual(1);
    } finally {
      await app.close();
    }
  });
});
