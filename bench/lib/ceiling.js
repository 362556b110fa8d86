'use strict';
// The database-bound ceiling: the SQL transaction of a keyed create, issued straight to
// PostgreSQL with `pg` from N concurrent clients (N = the HTTP run's connections), no
// HTTP and no framework in between. The SQL is the server's own (required from dist/),
// so the ceiling always measures the protocol the server runs.
const { randomBytes, randomUUID } = require('node:crypto');
const { performance } = require('node:perf_hooks');
const { fingerprint } = require('../../dist/idempotency/canonical-json.js');
const { newId } = require('../../dist/common/ids.js');
const { hashApiKey } = require('../../dist/merchants/api-key.js');
const { toOrderObject } = require('../../dist/orders/order.js');
const { INSERT_ORDER } = require('../../dist/orders/orders.service.js');
const { API_KEY_LOOKUP_WITH_ANSWER } = require('../../dist/common/auth/api-key.guard.js');
const { IdempotencyStore, PREPARED_STATEMENTS } = require('../../dist/idempotency/idempotency.store.js');
const { SAVEPOINT } = require('../../dist/idempotency/idempotency.interceptor.js');
const { ApiResponse } = require('../../dist/common/http/api-response.js');
const { connect } = require('./database');
const { summarize, Tally } = require('./stats');

// The store only builds statements here; the PREPAREs go to each client once, as Db does.
const store = new IdempotencyStore({ prepareOnEveryConnection: () => undefined });

/** Several statements in one simple-query message, as src/database/db.ts sends them. */
const simple = (client, statements) => client.query(statements.join(';\n'));

/**
 * One keyed create, round trip for round trip as the server runs it (pool aside), with
 * the server's own SQL, taken from dist/:
 * the API-key lookup that also reads the stored answer; BEGIN + claim + SAVEPOINT; the
 * order insert; (delete expired +) insert answer + COMMIT.
 */
async function keyedCreate(client, merchantId, keyHash, outTradeNo) {
  const scope = { merchantId, environment: 'test', key: randomUUID() };
  const auth = (await client.query({ ...API_KEY_LOOKUP_WITH_ANSWER, values: [keyHash, 'test', scope.key] })).rows[0];
  if (!auth || auth.method !== null) throw new Error('the API key was not found, or a new key was stored');
  try {
    const [, claimed] = await simple(client, ['BEGIN', store.claimStatement(scope), SAVEPOINT]);
    const claim = store.toClaim(claimed.rows[0]);
    if (!claim.locked || claim.stored || claim.expiredAnswer) throw new Error('a new key was found locked or stored');
    const body = { out_trade_no: outTradeNo, amount: 2990, currency: 'USD', subject: 'Annual plan' };
    const params = [newId('ord'), merchantId, 'test', outTradeNo, 2990, 'USD', 'Annual plan', null, {}, null, null];
    const order = (await client.query({ ...INSERT_ORDER, values: params })).rows[0];
    if (!order) throw new Error(`out_trade_no ${outTradeNo} was taken`);
    const requestId = `req_${randomBytes(16).toString('hex')}`;
    const response = new ApiResponse(201, { data: toOrderObject(order), request_id: requestId }, { Location: `/v1/orders/${order.id}` });
    const incoming = { method: 'POST', path: '/v1/orders', fingerprint: fingerprint(body) };
    await simple(client, [...store.saveStatements(scope, claim, incoming, response, requestId, 86400), 'COMMIT']);
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

let sequence = 0;

const sqlCeiling = {
  id: 'sql-ceiling',
  title: 'same SQL transaction via pg (ceiling)',
  short: 'SQL ceiling (pg)',
  expect: 'COMMIT',
  async run(ctx, connections, seconds) {
    const keyHash = hashApiKey(ctx.server.apiKey);
    const clients = await Promise.all(
      Array.from({ length: connections }, () =>
        // The server's per-connection settings (src/database/data-source-options.ts).
        connect(ctx.database.url, {
          query_timeout: 10_000,
          options: '-c lock_timeout=10000 -c idle_in_transaction_session_timeout=60000 -c TimeZone=UTC',
        }),
      ),
    );
    await Promise.all(clients.map((client) => simple(client, PREPARED_STATEMENTS)));
    const tally = new Tally();
    const latencies = [];
    let completed = 0;
    let errors = 0;
    const started = performance.now();
    const deadline = started + seconds * 1000;
    try {
      await Promise.all(
        clients.map(async (client) => {
          while (performance.now() < deadline && errors < 100) {
            const t0 = performance.now();
            try {
              await keyedCreate(client, ctx.server.merchantId, keyHash, `S${ctx.tag}_${(++sequence).toString(36)}`);
              latencies.push(performance.now() - t0);
            } catch (error) {
              errors++;
              tally.bad(error.message, 0);
            }
            completed++;
          }
        }),
      );
    } finally {
      await Promise.all(clients.map((client) => client.end().catch(() => undefined)));
    }
    return summarize({
      completed,
      seconds: (performance.now() - started) / 1000,
      latencies,
      errors,
      tally,
    });
  },
};

module.exports = { sqlCeiling };
