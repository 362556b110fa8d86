import { expectError, expectSuccess } from './support/expect-error';
import { createMerchant, orderBody, TestMerchant } from './support/factories';
import { NOTIFY_ENV } from './support/notifications';
import { startReceiver, waitFor } from './support/receiver';
import { startTestApp, TestApp } from './support/test-app';
import { NotificationHttpClient } from '../src/notifications/notification-http.client';

const FORBIDDEN = [
  'http://127.0.0.1/n',
  'http://127.1.2.3/n',
  'http://0x7f.1/n',
  'http://2130706433/n',
  'http://localhost/n',
  'https://LOCALHOST./n',
  'https://app.localhost/n',
  'http://ip6-localhost/n',
  'http://receiver:8080/n',
  'http://metadata.google.internal/computeMetadata/v1/',
  'https://printer.local/n',
  'http://10.0.0.1/n',
  'http://172.16.5.4/n',
  'http://192.168.1.1/n',
  'http://169.254.169.254/latest/meta-data',
  'http://100.64.0.1/n',
  'http://0.0.0.0/n',
  'http://224.0.0.1/n',
  'http://240.0.0.1/n',
  'http://255.255.255.255/n',
  'http://198.18.0.1/n',
  'http://[::1]/n',
  'http://[::]/n',
  'http://[fe80::1]/n',
  'http://[fd12:3456::1]/n',
  'http://[ff02::1]/n',
  'http://[::ffff:127.0.0.1]/n',
  'http://[::ffff:a9fe:a9fe]/n',
  'http://[64:ff9b::a00:1]/n',
  'http://[2001:db8::1]/n',
];

describe('notify_url and server-side request forgery (docs/notifications.md)', () => {
  let t: TestApp;
  let merchant: TestMerchant;

  beforeAll(async () => {
    t = await startTestApp({ ...NOTIFY_ENV, NOTIFY_ALLOW_PRIVATE_NETWORKS: 'false' });
    merchant = await createMerchant(t);
  });
  afterAll(() => t.close());

  const createOrder = (notifyUrl: string, key = merchant.testKey) =>
    t
      .http()
      .post('/v1/orders')
      .set('X-Api-Key', key)
      .send(orderBody({ notify_url: notifyUrl }));

  it.each(FORBIDDEN)('refuses %s at creation (400 parameter_invalid, notify_url), storing nothing', async (url) => {
    const response = await createOrder(url);
    expectError(response, 400, 'parameter_invalid', 'notify_url');
    const { rows } = await t.db.pool.query('SELECT 1 FROM orders WHERE merchant_id = $1 AND notify_url = $2', [
      merchant.id,
      url,
    ]);
    expect(rows).toHaveLength(0);
  });

  it('accepts http:// in test but only https:// in live', async () => {
    expectSuccess(await createOrder('http://merchant.example/notify'), 201);
    expectError(
      await createOrder('http://merchant.example/notify', merchant.liveKey),
      400,
      'parameter_invalid',
      'notify_url',
    );
    expectSuccess(await createOrder('https://merchant.example/notify', merchant.liveKey), 201);
    expectError(await createOrder('https://user:pw@merchant.example/notify'), 400, 'parameter_invalid', 'notify_url');
  });

  it('refuses a forbidden refund notify_url too', async () => {
    const order = (await createOrder('https://merchant.example/notify')).body.data;
    await t.http().post(`/v1/test_helpers/orders/${order.id}/pay`).set('X-Api-Key', merchant.testKey).expect(200);
    const refund = await t
      .http()
      .post('/v1/refunds')
      .set('X-Api-Key', merchant.testKey)
      .send({ order_id: order.id, amount: 1, notify_url: 'http://10.1.1.1/hook' });
    expectError(refund, 400, 'parameter_invalid', 'notify_url');
    const { rows } = await t.db.pool.query('SELECT 1 FROM refunds WHERE order_id = $1', [order.id]);
    expect(rows).toHaveLength(0);
  });

  it('fails the attempt with destination_forbidden when the name resolves to 127.0.0.1 at connect time', async () => {
    const receiver = await startReceiver();
    const client = t.app.get(NotificationHttpClient);
    const original = client.resolve;
    // The name passes the creation check; DNS then answers a loopback address (rebinding).
    client.resolve = async (hostname) =>
      hostname === 'rebind.merchant.example' ? [{ address: '127.0.0.1', family: 4 }] : original(hostname);
    try {
      const order = (await createOrder(`http://rebind.merchant.example:${receiver.port}/notify`)).body.data;
      await t.http().post(`/v1/test_helpers/orders/${order.id}/pay`).set('X-Api-Key', merchant.testKey).expect(200);
      const { rows } = await t.db.pool.query('SELECT id FROM events WHERE order_id = $1', [order.id]);
      await waitFor(t.db.pool, `SELECT delivery_status = 'failed' AS done FROM events WHERE id = $1`, [rows[0].id]);
      const attempts = await t.db.pool.query(
        'SELECT error, status_code FROM notification_attempts WHERE event_id = $1',
        [rows[0].id],
      );
      expect(attempts.rows.map((a) => a.error)).toEqual([
        'destination_forbidden',
        'destination_forbidden',
        'destination_forbidden',
      ]);
      expect(receiver.received).toHaveLength(0);
    } finally {
      client.resolve = original;
      await receiver.close();
    }
  });
});
