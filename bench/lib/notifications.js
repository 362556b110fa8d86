'use strict';
// Merchant notifications (docs/notifications.md): a receiver on 127.0.0.1 that answers
// 200 at once and notes when each event arrived; the delivery rate of a batch of events
// committed at once (the server's 10 workers drain it); and the commit-to-delivery
// latency of single payments on an otherwise idle server.
const { createServer } = require('node:http');
const { randomBytes } = require('node:crypto');
const { Webhook } = require('standardwebhooks');
const { connect } = require('./database');
const { sleep } = require('./cleanup');
const { percentile } = require('./stats');
const { paymentSucceeded } = require('./payments');
const { DELIVER_TASK, JOB_MAX_ATTEMPTS, slotJobKeySuffix } = require('../../dist/notifications/events.repository.js');

/** Starts the receiver once per bench run (stopped by the run's cleanup). */
async function notificationReceiver(ctx) {
  if (ctx.receiver) return ctx.receiver;
  const arrivals = new Map(); // webhook-id → { at, createdAt }
  const server = createServer((request, response) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      const at = Date.now();
      response.writeHead(200).end();
      const id = request.headers['webhook-id'];
      if (!arrivals.has(id)) {
        let createdAt = null;
        try {
          createdAt = Date.parse(JSON.parse(Buffer.concat(chunks).toString('utf8')).created_at);
        } catch {
          // counted, without a latency
        }
        arrivals.set(id, { at, createdAt });
      }
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  ctx.cleanup.push(
    'the notification receiver',
    () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  );
  ctx.receiver = { url: `http://127.0.0.1:${server.address().port}/notify`, arrivals };
  return ctx.receiver;
}

async function waitForArrivals(receiver, ids, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (ids.some((id) => !receiver.arrivals.has(id))) {
    if (Date.now() > deadline) return false;
    await sleep(20);
  }
  return true;
}

/** Waits until earlier scenarios' notifications due now are delivered, so they do not queue ahead. */
async function drained(ctx) {
  const client = await connect(ctx.database.url);
  try {
    const deadline = Date.now() + 180_000;
    for (;;) {
      const { rows } = await client.query(
        `SELECT count(*)::int AS n FROM events
          WHERE delivery_status = 'pending' AND (NOT enqueued OR next_attempt_at < now() + interval '10 minutes')`,
      );
      if (rows[0].n === 0 || Date.now() > deadline) return;
      await sleep(250);
    }
  } finally {
    await client.end();
  }
}

const empty = () => ({ non2xx: 0, errors: 0, timeouts: 0, statuses: {}, unexpected: 0, problems: [] });

/** Events and their first jobs committed in one transaction; the rate at which they arrive. */
const deliveryRate = {
  id: 'notify-deliveries',
  title: 'notification deliveries (10 workers), receiver answers 200',
  short: 'notifications/s',
  expect: 'every event arrives',
  connections: [10],
  warmup: false,
  async run(ctx, _connections, seconds) {
    const receiver = await notificationReceiver(ctx);
    await drained(ctx);
    const count = Math.max(200, Math.round(seconds * 300));
    const client = await connect(ctx.database.url);
    let ids;
    const started = Date.now();
    try {
      const order = `ord_${randomBytes(16).toString('hex')}`;
      await client.query(
        `INSERT INTO orders (id, merchant_id, environment, out_trade_no, amount, currency, subject, notify_url)
         VALUES ($1, $2, 'test', $3, 2990, 'USD', 'Bench notifications', $4)`,
        [order, ctx.server.merchantId, `N${ctx.tag}_${randomBytes(4).toString('hex')}`, receiver.url],
      );
      const { rows } = await client.query(
        `WITH event AS (
           INSERT INTO events (id, merchant_id, environment, type, order_id, data, notify_url, delivery_status, next_attempt_at, enqueued)
           SELECT 'evt_' || md5(random()::text || g), $1, 'test', 'order.paid', $2,
                  json_build_object('object', json_build_object('id', $2::text, 'object', 'order')), $3, 'pending', now(), true
             FROM generate_series(1, $4) AS g
           RETURNING id)
         SELECT id, graphile_worker.add_job($5, json_build_object('event_id', id, 'slot', 0, 'job_key', id || $6),
                                            job_key => id || $6, max_attempts => $7) IS NOT NULL AS queued
           FROM event`,
        // Keyed as the relay keys them, so the workers run them as the server's own.
        [ctx.server.merchantId, order, receiver.url, count, DELIVER_TASK, slotJobKeySuffix(0), JOB_MAX_ATTEMPTS],
      );
      ids = rows.map((row) => row.id);
    } finally {
      await client.end();
    }
    const complete = await waitForArrivals(receiver, ids, 120_000);
    const arrived = ids.filter((id) => receiver.arrivals.has(id));
    const last = Math.max(...arrived.map((id) => receiver.arrivals.get(id).at));
    const latencies = arrived.map((id) => receiver.arrivals.get(id).at - started).sort((a, b) => a - b);
    const figures = empty();
    if (!complete) {
      figures.unexpected = ids.length - arrived.length;
      figures.problems.push(`${ids.length - arrived.length} of ${ids.length} events never arrived`);
    }
    ctx.log(`  ${arrived.length} notifications delivered in ${((last - started) / 1000).toFixed(1)} s`);
    return {
      ...figures,
      rps: arrived.length / ((last - started) / 1000),
      p50: percentile(latencies, 0.5),
      p99: percentile(latencies, 0.99),
    };
  },
};

/** One payment at a time (a signed webhook), ~20 per second: commit to arrival. */
const deliveryLatency = {
  id: 'notify-latency',
  title: 'notification commit-to-delivery latency, idle server',
  short: 'notify latency',
  expect: 'every event arrives',
  connections: [10],
  warmup: false,
  async run(ctx, _connections, seconds) {
    const receiver = await notificationReceiver(ctx);
    await drained(ctx);
    const client = await connect(ctx.database.url);
    const count = Math.max(20, Math.round(seconds * 20));
    let orders;
    try {
      ({ rows: orders } = await client.query(
        `INSERT INTO orders (id, merchant_id, environment, out_trade_no, amount, currency, subject, notify_url)
         SELECT 'ord_' || md5(random()::text || g), $1, 'test', $2 || g, 2990, 'USD', 'Bench latency', $3
           FROM generate_series(1, $4) AS g RETURNING id`,
        [ctx.server.merchantId, `L${ctx.tag}_${randomBytes(3).toString('hex')}_`, receiver.url, count],
      ));
    } finally {
      await client.end();
    }
    const signer = new Webhook(ctx.server.webhookSecret);
    const figures = empty();
    const latencies = [];
    for (const { id: orderId } of orders) {
      const { id, body } = paymentSucceeded(orderId);
      const now = new Date();
      const response = await fetch(`${ctx.server.url}/v1/webhooks/kukopay`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'webhook-id': id,
          'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
          'webhook-signature': signer.sign(id, now, body),
        },
        body,
      });
      await response.text();
      if (response.status !== 200) figures.non2xx++;
      await sleep(50);
    }
    const eventIds = await eventsOf(
      ctx,
      orders.map((o) => o.id),
    );
    if (!(await waitForArrivals(receiver, eventIds, 30_000))) {
      figures.unexpected++;
      figures.problems.push('some notifications never arrived');
    }
    for (const id of eventIds) {
      const arrival = receiver.arrivals.get(id);
      if (arrival?.createdAt) latencies.push(arrival.at - arrival.createdAt);
    }
    latencies.sort((a, b) => a - b);
    return {
      ...figures,
      rps: eventIds.length / seconds,
      p50: percentile(latencies, 0.5),
      p99: percentile(latencies, 0.99),
    };
  },
};

async function eventsOf(ctx, orderIds) {
  const client = await connect(ctx.database.url);
  try {
    const { rows } = await client.query('SELECT id FROM events WHERE order_id = ANY($1)', [orderIds]);
    return rows.map((row) => row.id);
  } finally {
    await client.end();
  }
}

module.exports = { notificationReceiver, notificationScenarios: [deliveryRate, deliveryLatency] };
