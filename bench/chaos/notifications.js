/**
 * The notification part of `npm run chaos`: orders paid through signed provider webhooks
 * (retried with the same event id, as a provider does) while the server is killed, and a
 * receiver that counts the notifications. At the end every paid order must have been
 * notified at least once, and exactly once after deduplication by webhook-id.
 */
const { createServer } = require('node:http');
const { randomUUID } = require('node:crypto');
const { Client } = require('pg');
const { Webhook } = require('standardwebhooks');

/** Answers 200 at once and counts deliveries per webhook-id. */
async function startCountingReceiver() {
  const counts = new Map();
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const id = String(request.headers['webhook-id']);
      counts.set(id, (counts.get(id) ?? 0) + 1);
      response.writeHead(200).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/notify`,
    counts,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  };
}

async function createPendingOrders(url, key, notifyUrl, count) {
  const orders = [];
  for (let i = 0; i < count; i++) {
    const response = await fetch(`${url}/v1/orders`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Api-Key': key },
      body: JSON.stringify({
        out_trade_no: `CHAOS_PAY_${i}`,
        amount: 100,
        currency: 'USD',
        subject: 'Chaos',
        notify_url: notifyUrl,
      }),
    });
    const text = await response.text();
    if (response.status !== 201) throw new Error(`creating a chaos order: ${response.status} ${text}`);
    orders.push(JSON.parse(text).data.id);
  }
  return orders.map((orderId) => {
    const eventId = `evt_${randomUUID().replace(/-/g, '')}`;
    const body = JSON.stringify({
      id: eventId,
      type: 'payment.succeeded',
      created_at: new Date().toISOString(),
      data: { order_id: orderId, amount: 100, currency: 'USD', provider_payment_id: `pay_${eventId.slice(4)}` },
    });
    return { kind: 'payment', orderId, eventId, body, paid: false, failure: null };
  });
}

/** One provider delivery attempt of the payment (fresh timestamp and signature). Returns 'done' or 'retry'. */
async function sendPayment(serverUrl, secret, op) {
  const now = new Date();
  const response = await fetch(`${serverUrl}/v1/webhooks/kukopay`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'webhook-id': op.eventId,
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(op.eventId, now, op.body),
    },
    body: op.body,
    signal: AbortSignal.timeout(15000),
  });
  const text = await response.text();
  if (response.status === 200) {
    op.paid = true;
    return 'done';
  }
  if (response.status >= 500) return 'retry';
  op.failure = `${response.status} ${text}`;
  return 'done';
}

/** Waits until no event is pending, then compares the database with what the receiver counted. */
async function verifyNotifications(databaseUrl, payments, receiver, timeoutMs = 180000) {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { rows } = await client.query(`SELECT count(*)::int AS n FROM events WHERE delivery_status = 'pending'`);
      if (rows[0].n === 0 || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const orderIds = payments.map((op) => op.orderId);
    const paid = (await client.query(`SELECT id FROM orders WHERE id = ANY($1) AND status = 'paid'`, [orderIds])).rows;
    const events = (
      await client.query(
        `SELECT id, order_id, delivery_status FROM events WHERE order_id = ANY($1) AND type = 'order.paid'`,
        [orderIds],
      )
    ).rows;
    const eventsPerOrder = new Map();
    for (const event of events) eventsPerOrder.set(event.order_id, (eventsPerOrder.get(event.order_id) ?? 0) + 1);
    const notified = events.filter((event) => (receiver.counts.get(event.id) ?? 0) > 0);
    const deliveries = events.reduce((sum, event) => sum + (receiver.counts.get(event.id) ?? 0), 0);
    const result = {
      payments: payments.length,
      paidOrders: paid.length,
      paymentEvents: events.length,
      ordersWithOneEvent: [...eventsPerOrder.values()].filter((n) => n === 1).length,
      notifiedOrders: notified.length,
      notificationDeliveries: deliveries,
      duplicateNotifications: deliveries - notified.length,
      undelivered: events.filter((event) => event.delivery_status !== 'delivered').length,
      paymentFailures: payments.filter((op) => op.failure !== null).length,
    };
    result.notificationsOk =
      result.paidOrders === payments.length &&
      result.paymentEvents === payments.length &&
      result.ordersWithOneEvent === payments.length &&
      result.notifiedOrders === payments.length &&
      result.undelivered === 0 &&
      result.paymentFailures === 0;
    return result;
  } finally {
    await client.end();
  }
}

module.exports = { startCountingReceiver, createPendingOrders, sendPayment, verifyNotifications };
