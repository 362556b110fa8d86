import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KukoPay } from '@kukopay/node';
import { orderBody } from '../support/factories';
import { NOTIFY_ENV } from '../support/notifications';
import { ADMIN_TOKEN } from '../support/test-app';
import { deliverEvent, paymentSucceeded } from '../support/webhooks';
import { SdkServer, startSdkServer } from './support/sdk-server';

/**
 * events.retrieve / list / redeliver and KukoPay.notifications.verify against the real
 * server, which delivers to a receiver on 127.0.0.1 (NOTIFY_ENV: workers on, private
 * networks allowed); the unit tests in sdk/test cover the client side on scripted answers.
 */
describe('@kukopay/node events and notifications against the real server', () => {
  let s: SdkServer;
  let kuko: KukoPay;
  let secret: string;
  let receiver: Receiver;

  beforeAll(async () => {
    s = await startSdkServer(NOTIFY_ENV);
    const created = await s.t
      .http()
      .post('/v1/admin/merchants')
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
      .send({ name: 'Notified' })
      .expect(201);
    kuko = s.client({}, created.body.data.api_keys.test);
    secret = created.body.data.notification_secrets.test;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await new Promise((resolve) => receiver.server.close(resolve));
    await s.close();
  });

  async function paidOrder(notifyUrl?: string) {
    const order = await kuko.orders.create({
      out_trade_no: String(orderBody().out_trade_no),
      amount: 2990,
      currency: 'USD',
      subject: 'Annual plan',
      ...(notifyUrl ? { notify_url: notifyUrl } : {}),
    });
    const paid = await deliverEvent(s.t, paymentSucceeded(order.id, { amount: 2990, currency: 'USD' }));
    expect(paid.body.data).toMatchObject({ status: 'processed' });
    return order;
  }

  it('events.list finds the order.paid event of an order; retrieve adds its delivery', async () => {
    const order = await paidOrder();
    const page = await kuko.events.list({ order_id: order.id });
    expect(page.data).toHaveLength(1);
    const [event] = page.data;
    expect(event).toMatchObject({ object: 'event', type: 'order.paid', environment: 'test' });
    if (event.type !== 'order.paid') throw new Error('not an order event');
    expect(event.data.object).toMatchObject({ id: order.id, status: 'paid' });

    const retrieved = await kuko.events.retrieve(event.id);
    expect(retrieved).toMatchObject({ id: event.id, delivery: { status: 'no_destination' } });

    const ids: string[] = [];
    for await (const e of kuko.events.list({ type: 'order.paid', limit: 1 })) ids.push(e.id);
    expect(ids).toContain(event.id);
  });

  it('a delivered notification verifies with the merchant secret, webhook-id being the event id', async () => {
    const order = await paidOrder(`${receiver.url}/notify`);
    const delivery = await receiver.next();
    const event = KukoPay.notifications.verify(delivery.body, delivery.headers, secret);
    expect(event).toMatchObject({ id: delivery.headers['webhook-id'], type: 'order.paid' });
    if (event.type !== 'order.paid') throw new Error('not an order event');
    expect(event.data.object.id).toBe(order.id);
    expect(() =>
      KukoPay.notifications.verify(delivery.body, delivery.headers, `whsec_${Buffer.alloc(32).toString('base64')}`),
    ).toThrow();
  });

  it('events.redeliver answers 202 and makes one more attempt; its key replays', async () => {
    const order = await paidOrder(`${receiver.url}/notify`);
    await receiver.next();
    const [event] = (await kuko.events.list({ order_id: order.id })).data;
    const key = `redeliver-${event.id}`;
    const first = await kuko.events.redeliver(event.id, { idempotencyKey: key });
    expect(first.lastResponse).toMatchObject({ status: 202, idempotentReplayed: false });
    // The 202's body is the event as it stood when the attempt was queued.
    expect(first).toMatchObject({ id: event.id, object: 'event', type: 'order.paid', data: event.data });
    expect(['pending', 'delivered']).toContain(first.delivery.status);
    expect(first.delivery.attempts).toBeGreaterThanOrEqual(0);
    const again = await receiver.next();
    expect(again.headers['webhook-id']).toBe(event.id);
    const repeat = await kuko.events.redeliver(event.id, { idempotencyKey: key });
    expect(repeat.lastResponse).toMatchObject({ status: 202, idempotentReplayed: true });

    // Both deliveries, oldest first: the scheduled one, then the redelivery (recorded just
    // after the receiver answered it).
    let attempts = await kuko.events.listAttempts(event.id);
    for (let tries = 0; attempts.length < 2 && tries < 100; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      attempts = await kuko.events.listAttempts(event.id);
    }
    expect(attempts.map((attempt) => [attempt.kind, attempt.status_code])).toEqual([
      ['scheduled', 200],
      ['redelivery', 200],
    ]);
    expect(attempts[0]).toMatchObject({ object: 'notification_attempt', url: `${receiver.url}/notify` });
    expect(attempts.lastResponse.status).toBe(200);
  });
});

interface Delivery {
  headers: IncomingHttpHeaders;
  body: Buffer;
}

interface Receiver {
  server: Server;
  url: string;
  /** The next notification received (already received ones first). */
  next(): Promise<Delivery>;
}

/** A merchant's notification endpoint on 127.0.0.1 that answers 200 and keeps what it got. */
async function startReceiver(): Promise<Receiver> {
  const received: Delivery[] = [];
  const waiting: Array<(delivery: Delivery) => void> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      res.writeHead(200).end();
      const delivery = { headers: req.headers, body: Buffer.concat(chunks) };
      const waiter = waiting.shift();
      if (waiter) waiter(delivery);
      else received.push(delivery);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    next: () => {
      const ready = received.shift();
      return ready ? Promise.resolve(ready) : new Promise((resolve) => waiting.push(resolve));
    },
  };
}
