#!/usr/bin/env node
/**
 * npm run chaos: proves that the Idempotency-Key layer alone loses and duplicates nothing
 * while the server is killed (SIGKILL) again and again and PostgreSQL is restarted.
 *
 * It starts its own PostgreSQL and server, pays one large order, then runs refund
 * operations of amount 1 in test mode WITHOUT out_refund_no: only the key protects them.
 * Workers retry each operation with its one key and one body (backoff on 409, 5xx and
 * connection errors) while the harness kills and restarts the server about every second
 * and restarts PostgreSQL. At the end it checks from the database that every operation
 * produced exactly one refund, stored under its key, and that amount_refunded adds up.
 *
 *   node bench/chaos.js [--operations 300] [--workers 8] [--kills 10] [--db-restarts 1] [--payments 100]
 *     [--client fetch|sdk]   (--help says what each is)
 *
 * `--client sdk` makes the workers @kukopay/node clients (bench/chaos/sdk-client.js): the
 * client's own retries instead of the loop below, under the same kills.
 *
 * Prints the figures and the verdict; exits non-zero on any loss or duplicate. Needs a
 * build (npm run chaos builds first). Everything it starts is stopped at the end.
 */
const { randomUUID } = require('node:crypto');
const { Client } = require('pg');
const { Webhook } = require('standardwebhooks');
const { readCommandLine, refuseArguments } = require('../dist/config/command-line.js');
const { startTestCluster } = require('../dist/database/test-clusters.js');
const { freePort } = require('../dist/database/embedded-postgres.js');
const { startServer } = require('./chaos/server.js');
const { sdkRefundOperation, MAX_RETRIES } = require('./chaos/sdk-client.js');
const notifications = require('./chaos/notifications.js');

const SECRET = `whsec_${Buffer.from('chaos-harness-webhook-secret-0001').toString('base64')}`;
const ADMIN_TOKEN = 'chaos-admin-token-0123456789';
const LIMIT_MS = 10 * 60 * 1000;

const USAGE = `
Usage: npm run chaos -- [options]   (or node bench/chaos.js [options], after a build)

Kills the server (SIGKILL) again and again and restarts PostgreSQL under retried refunds
and webhook payments, then counts from the database that nothing was lost or duplicated
(docs/crash-safety.md). Starts its own PostgreSQL and server, and stops them at the end;
exits non-zero on any loss or duplicate. Reads no environment variable of its own.

Options:
  --operations N    refund operations (default 300)
  --workers N       concurrent clients (default 8)
  --kills N         server kills, at least (default 10)
  --db-restarts N   PostgreSQL restarts (default 1)
  --payments N      orders paid by webhooks under the same kills (default 100)
  --client fetch|sdk  sdk: the clients are @kukopay/node with its own retries (default fetch)
  -h, --help        this text
`;

const COUNTS = { operations: 300, workers: 8, kills: 10, 'db-restarts': 1, payments: 100 };

/** Read before anything starts: a mistyped option must not start a run with the defaults. */
function parseOptions(argv) {
  const options = Object.fromEntries(Object.keys(COUNTS).map((name) => [name, { type: 'string' }]));
  const spec = { name: 'chaos', usage: USAGE, options: { ...options, client: { type: 'string' } } };
  const { values } = readCommandLine(spec, argv);
  const count = (name) => {
    if (values[name] === undefined) return COUNTS[name];
    if (!/^\d+$/.test(values[name])) refuseArguments('chaos', `--${name} takes a whole number, got '${values[name]}'`);
    return Number(values[name]);
  };
  const client = values.client ?? 'fetch';
  if (!['fetch', 'sdk'].includes(client)) refuseArguments('chaos', `--client takes fetch or sdk, got '${client}'`);
  return {
    operations: count('operations'),
    workers: count('workers'),
    kills: count('kills'),
    dbRestarts: count('db-restarts'),
    payments: count('payments'),
    client,
  };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function main() {
  const options = parseOptions(process.argv.slice(2));
  const started = Date.now();
  const cluster = await startTestCluster('chaos');
  const port = await freePort();
  const receiver = await notifications.startCountingReceiver();
  const env = {
    DATABASE_URL: cluster.url,
    PORT: String(port),
    ADMIN_TOKEN,
    WEBHOOK_SECRETS: `kukopay=${SECRET}`,
    LOG_LEVEL: 'warn',
    // Notifications go to the harness's receiver, on a compressed schedule.
    NOTIFY_ALLOW_PRIVATE_NETWORKS: 'true',
    NOTIFY_RETRY_SCHEDULE: '0,1s,1s,3s,5s,10s,20s,40s',
  };
  let server = await startServer(env);
  const stats = { kills: 0, dbRestarts: 0, attempts: 0, replays: 0, retried: { 409: 0, '5xx': 0, connection: 0 } };
  try {
    const { key, orderId } = await setUp(server.url, options.operations * 10);
    const sdk = options.client === 'sdk';
    const newOperation = () => ({ key: sdk ? null : randomUUID(), refundId: null, failure: null });
    const operations = Array.from({ length: options.operations }, newOperation);
    const payments = await notifications.createPendingOrders(server.url, key, receiver.url, options.payments);
    let done = 0;
    const total = options.operations + payments.length;
    const body = JSON.stringify({ order_id: orderId, amount: 1 });

    const runPayment = async (op) => {
      for (let attempt = 0; Date.now() - started < LIMIT_MS; attempt++) {
        try {
          if ((await notifications.sendPayment(server.url, SECRET, op)) === 'done') return;
        } catch {
          stats.retried.connection++;
        }
        await sleep(Math.min(50 * 2 ** Math.min(attempt, 4), 800) * (0.5 + Math.random()));
      }
      op.failure = 'gave up: time limit';
    };

    const runOperation = async (op) => {
      if (op.kind === 'payment') return runPayment(op);
      for (let attempt = 0; Date.now() - started < LIMIT_MS; attempt++) {
        stats.attempts++;
        try {
          const response = await fetch(`${server.url}/v1/refunds`, {
            method: 'POST',
            headers: { 'X-Api-Key': key, 'Idempotency-Key': op.key, 'Content-Type': 'application/json' },
            body,
            signal: AbortSignal.timeout(15000),
          });
          const text = await response.text();
          if (response.status === 201) {
            op.refundId = JSON.parse(text).data.id;
            if (response.headers.get('idempotent-replayed') === 'true') stats.replays++;
            return;
          }
          if (response.status !== 409 && response.status < 500) {
            op.failure = `${response.status} ${text}`;
            return;
          }
          stats.retried[response.status === 409 ? 409 : '5xx']++;
        } catch {
          stats.retried.connection++;
        }
        await sleep(Math.min(50 * 2 ** Math.min(attempt, 4), 800) * (0.5 + Math.random()));
      }
      op.failure = 'gave up: time limit';
    };

    // Refunds and payments interleaved, so the kills land among both.
    const queue = [...operations, ...payments].sort(() => Math.random() - 0.5);
    const sdkRefund = sdk ? sdkRefundOperation(server.url, key, orderId, stats) : null;
    const operation = (op) => (sdkRefund && op.kind !== 'payment' ? sdkRefund(op) : runOperation(op));
    let refundsInFlight = 0;
    let refundsLeft = operations.length;
    const workers = Array.from({ length: options.workers }, async () => {
      for (let op = queue.shift(); op; op = queue.shift()) {
        const refund = op.kind !== 'payment';
        if (refund) refundsInFlight++;
        try {
          await operation(op);
        } finally {
          if (refund) {
            refundsInFlight--;
            refundsLeft--;
          }
        }
        done++;
      }
    });

    // Kill about every second, and at least options.kills times, spread over the run;
    // restart PostgreSQL in the middle. While refunds are left, a kill waits for one to be
    // in flight: a short run (three kills among 140 operations, most of them payments)
    // could otherwise land every kill among payments only, and no refund call would meet
    // one.
    const chaos = (async () => {
      const perKill = total / (options.kills + 1);
      let lastKill = Date.now();
      while (done < total && Date.now() - started < LIMIT_MS) {
        await sleep(50);
        if (stats.dbRestarts < options.dbRestarts && done >= total / 2) {
          await cluster.restart();
          stats.dbRestarts++;
        }
        const due = Date.now() - lastKill > 700 + Math.random() * 600 || done >= perKill * (stats.kills + 1);
        if (due && done < total && (refundsInFlight > 0 || refundsLeft === 0)) {
          await server.kill('SIGKILL');
          stats.kills++;
          server = await startServer(env);
          lastKill = Date.now();
        }
      }
    })();

    await Promise.all(workers);
    await chaos;
    if (sdkRefund) stats.resumed = await sdkRefund.resumeFailed(operations);
    const verdict = await verify(cluster.url, orderId, operations);
    const notified = await notifications.verifyNotifications(cluster.url, payments, receiver);
    const result = {
      ...options,
      ...stats,
      ...verdict,
      ...notified,
      ok: verdict.ok && notified.notificationsOk,
      durationSeconds: Math.round((Date.now() - started) / 100) / 10,
    };
    report(result);
    process.exitCode = result.ok ? 0 : 1;
  } finally {
    await server.kill('SIGTERM');
    await receiver.close();
    await cluster.stop();
  }
}

/** A merchant, and one paid order large enough that refunds never run out. */
async function setUp(url, amount) {
  const post = async (path, headers, body) => {
    const response = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body,
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${path}: ${response.status} ${text}`);
    return JSON.parse(text).data;
  };
  const merchant = await post(
    '/v1/admin/merchants',
    { Authorization: `Bearer ${ADMIN_TOKEN}` },
    JSON.stringify({ name: 'Chaos' }),
  );
  const key = merchant.api_keys.test;
  const order = await post(
    '/v1/orders',
    { 'X-Api-Key': key },
    JSON.stringify({ out_trade_no: 'CHAOS_ORDER', amount, currency: 'USD', subject: 'Chaos' }),
  );
  const eventId = `evt_${randomUUID()}`;
  const event = JSON.stringify({
    id: eventId,
    type: 'payment.succeeded',
    created_at: new Date().toISOString(),
    data: { order_id: order.id, amount, currency: 'USD', provider_payment_id: 'pay_chaos' },
  });
  const now = new Date();
  const paid = await post(
    '/v1/webhooks/kukopay',
    {
      'webhook-id': eventId,
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': new Webhook(SECRET).sign(eventId, now, event),
    },
    event,
  );
  if (paid.status !== 'processed') throw new Error(`payment not processed: ${JSON.stringify(paid)}`);
  return { key, orderId: order.id };
}

/** What the database says: one refund per operation, stored under its key, and the sum. */
async function verify(url, orderId, operations) {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const refunds = (await client.query('SELECT id, amount FROM refunds WHERE order_id = $1', [orderId])).rows;
    const operationKeys = operations.map((op) => op.key).filter((key) => key !== null);
    const keys = (
      await client.query('SELECT key, response_status, response_body FROM idempotency_keys WHERE key = ANY($1)', [
        operationKeys,
      ])
    ).rows;
    const [order] = (await client.query('SELECT amount_refunded FROM orders WHERE id = $1', [orderId])).rows;
    const storedRefund = new Map(
      keys.map((row) => [row.key, row.response_status === 201 ? JSON.parse(row.response_body).data.id : null]),
    );
    const refundIds = new Set(refunds.map((row) => row.id));
    const failed = operations.filter((op) => op.failure !== null);
    const answeredIds = new Set(operations.map((op) => op.refundId).filter(Boolean));
    const lost = operations.filter(
      (op) => !op.refundId || !refundIds.has(op.refundId) || storedRefund.get(op.key) !== op.refundId,
    );
    const duplicated = refunds.length - answeredIds.size;
    const ok =
      failed.length === 0 &&
      lost.length === 0 &&
      duplicated === 0 &&
      refunds.length === operations.length &&
      Number(order.amount_refunded) === operations.length;
    return {
      ok,
      refunds: refunds.length,
      amountRefunded: Number(order.amount_refunded),
      failed: failed.length,
      lost: lost.length,
      duplicated,
      firstFailure: failed[0]?.failure ?? null,
    };
  } finally {
    await client.end();
  }
}

function report(result) {
  const lines = [
    `operations      ${result.operations} refunds of 1, ${result.workers} workers, Idempotency-Key only`,
    `clients         ${result.client === 'sdk' ? `@kukopay/node (its own retries, maxRetries ${MAX_RETRIES})` : 'fetch with the retry loop of bench/chaos.js'}`,
    `server kills    ${result.kills} (SIGKILL, then restart)`,
    `db restarts     ${result.dbRestarts}`,
    result.client === 'sdk'
      ? `attempts        ${result.attempts} (${result.attempts - result.operations} retries inside the client; ` +
        `${result.retriedCalls ?? 0} calls succeeded after retrying)`
      : `attempts        ${result.attempts} (retried: ${result.retried[409]} × 409, ${result.retried['5xx']} × 5xx, ${result.retried.connection} × connection error)`,
    `replays         ${result.replays}`,
    ...(result.client === 'sdk'
      ? [`resumed         ${result.resumed} (KukoPayConnectionError, called again with its key after the kills)`]
      : []),
    `duration        ${result.durationSeconds} s`,
    `in the database ${result.refunds} refunds, amount_refunded ${result.amountRefunded}`,
    `lost ${result.lost}, duplicated ${result.duplicated}, failed ${result.failed}${result.firstFailure ? ` (first: ${result.firstFailure})` : ''}`,
    `payments        ${result.payments} orders paid by webhooks under the same kills: ${result.paidOrders} paid, ${result.paymentEvents} order.paid events`,
    `notifications   ${result.notifiedOrders} orders notified (${result.notificationDeliveries} deliveries, ${result.duplicateNotifications} repeats), ${result.undelivered} undelivered`,
    `verdict         ${result.ok ? 'PASS: every operation produced exactly one refund; every paid order notified, once after dedup by webhook-id' : 'FAIL'}`,
  ];
  process.stdout.write(`${lines.join('\n')}\nCHAOS_RESULT ${JSON.stringify(result)}\n`);
}

main().catch((error) => {
  process.stderr.write(`chaos: ${error.stack ?? error.message}\n`);
  process.exit(2);
});
