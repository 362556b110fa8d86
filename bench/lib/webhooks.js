'use strict';
// Webhook deliveries: new payment.succeeded events, each for a pending order of its own
// (applied: order paid, one fulfilment), and duplicates, which re-send an event already
// answered with a fresh timestamp and signature (nothing changes). Three mixes: half and
// half (DESIGN.md §5), all new, all duplicates (the first few are new, to have some).
// Every request is signed as a provider would (Standard Webhooks, the `standardwebhooks`
// library the server verifies with).
const { randomBytes } = require('node:crypto');
const { Webhook } = require('standardwebhooks');
const { connect } = require('./database');
const { runHttp } = require('./load');
const { Tally } = require('./stats');
const { notificationReceiver } = require('./notifications');
const { paymentSucceeded } = require('./payments');

/** A second server on the bench database that enqueues notifications due in an hour and delivers none. */
async function queueOnlyServer(ctx) {
  if (!ctx.queueOnly) {
    const { startServer } = require('./server');
    const { join } = require('node:path');
    ctx.queueOnly = await startServer({
      databaseUrl: ctx.database.url,
      logFile: join(__dirname, '..', 'results', 'server-queue-only.log'),
      cleanup: ctx.cleanup,
      env: { NOTIFY_WORKERS: 'off', NOTIFY_RETRY_SCHEDULE: '1h' },
    });
  }
  return ctx.queueOnly;
}

/** New events per second the order supply is sized for; running out is reported. */
const MAX_NEW_EVENTS_PER_SECOND = 2500;

/** Pending orders of 2990 USD, inserted in one statement (cheaper than the API). */
async function pendingOrders(ctx, count, notifyUrl = null) {
  const client = await connect(ctx.database.url);
  try {
    const { rows } = await client.query(
      `INSERT INTO orders (id, merchant_id, environment, out_trade_no, amount, currency, subject, notify_url)
       SELECT 'ord_' || md5(random()::text), $1, 'test', $2 || g, 2990, 'USD', 'Bench webhook', $4
         FROM generate_series(1, $3) AS g
       RETURNING id`,
      [ctx.server.merchantId, `W${ctx.tag}_${randomBytes(3).toString('hex')}_`, count, notifyUrl],
    );
    return rows.map((row) => row.id);
  } finally {
    await client.end();
  }
}

function deliveries({ id, title, short, duplicates, connections: counts, notify = false }) {
  return {
    id,
    title,
    short,
    expect: '200',
    connections: counts,
    // The CPU column belongs to the server that takes these webhooks.
    target: notify === 'queued' ? 'queueOnly' : 'server',
    prepare: notify === 'queued' ? (ctx) => queueOnlyServer(ctx) : undefined,
    async run(ctx, connections, seconds) {
      // With notify, each payment also enqueues a notification for a local receiver:
      // 'queued' on a server whose first attempt is an hour away (the enqueue alone),
      // 'delivered' on the bench's server, which delivers while it takes payments.
      const notifyUrl = notify ? (await notificationReceiver(ctx)).url : null;
      const server = notify === 'queued' ? await queueOnlyServer(ctx) : ctx.server;
      const orders = await pendingOrders({ ...ctx, server }, Math.ceil(seconds * MAX_NEW_EVENTS_PER_SECOND), notifyUrl);
      const signer = new Webhook(server.webhookSecret);
      const answered = []; // events whose first delivery has been answered: safe to duplicate
      const tally = new Tally();
      let sent = 0;
      const figures = await runHttp({
        url: server.url,
        connections,
        seconds,
        expectStatus: 200,
        tally,
        request: {
          method: 'POST',
          path: '/v1/webhooks/kukopay',
          headers: { 'content-type': 'application/json' },
          setupRequest(request, context) {
            const turn = sent++;
            let duplicate = answered.length > 0 && (duplicates === 'all' || (duplicates === 'half' && turn % 2 === 1));
            if (!duplicate && orders.length === 0) {
              tally.bad('ran out of pending orders: raise MAX_NEW_EVENTS_PER_SECOND');
              duplicate = answered.length > 0;
            }
            const event = duplicate
              ? answered[Math.floor(Math.random() * answered.length)]
              : paymentSucceeded(orders.pop() ?? 'ord_missing');
            context.event = event;
            context.duplicate = duplicate;
            const now = new Date();
            return {
              ...request,
              headers: {
                ...request.headers,
                'webhook-id': event.id,
                'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
                'webhook-signature': signer.sign(event.id, now, event.body),
              },
              body: event.body,
            };
          },
          onResponse(status, body, context) {
            if (status !== 200) return;
            let data;
            try {
              data = JSON.parse(body).data ?? {};
            } catch {
              return tally.bad(`an answer that is not JSON: ${body}`);
            }
            if (context.duplicate) {
              tally.note('duplicate');
              if (data.duplicate !== true) tally.bad(`a re-sent event was not seen as a duplicate: ${body}`);
            } else {
              tally.note(data.status ?? 'duplicate');
              if (data.status !== 'processed') tally.bad(`a new event was not processed: ${body}`);
              answered.push(context.event);
            }
          },
        },
      });
      return figures;
    },
  };
}

const webhookDeliveries = [
  deliveries({ id: 'webhooks', title: 'webhook deliveries, 1/2 duplicates', short: 'webhooks', duplicates: 'half' }),
  deliveries({
    id: 'webhooks-new',
    title: 'webhook deliveries, all new',
    short: 'webhooks, new',
    duplicates: 'none',
    connections: [10],
  }),
  deliveries({
    id: 'webhooks-notify',
    title: 'webhook deliveries, all new, each enqueuing a notification',
    short: 'webhooks, new + enqueue',
    duplicates: 'none',
    connections: [10],
    notify: 'queued',
  }),
  deliveries({
    id: 'webhooks-notify-delivered',
    title: 'webhook deliveries, all new, notifications delivered meanwhile',
    short: 'webhooks, new + deliver',
    duplicates: 'none',
    connections: [10],
    notify: 'delivered',
  }),
  deliveries({
    id: 'webhooks-dup',
    title: 'webhook deliveries, all duplicates',
    short: 'webhooks, dup',
    duplicates: 'all',
    connections: [10],
  }),
];

module.exports = { webhookDeliveries };
