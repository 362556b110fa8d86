'use strict';
// The database-bound ceiling: the SQL transaction of a keyed create, issued straight to
// PostgreSQL with `pg` from N concurrent clients (N = the HTTP run's connections), no
// HTTP and no framework in between. The SQL is the server's own: its repositories
// (required from dist/) run on each pg client through a small stand-in for Db, so the
// ceiling always measures the protocol the server runs.
const { randomBytes, randomUUID } = require('node:crypto');
const { performance } = require('node:perf_hooks');
const { fingerprint } = require('../../dist/idempotency/canonical-json.js');
const { newId } = require('../../dist/common/ids.js');
const { hashApiKey } = require('../../dist/merchants/api-key.js');
const { toOrderObject } = require('../../dist/orders/order.js');
const { OrdersRepository } = require('../../dist/orders/orders.repository.js');
const { IdempotencyKeysRepository } = require('../../dist/idempotency/idempotency-keys.repository.js');
const { ApiResponse } = require('../../dist/common/http/api-response.js');
const { invocation, preparation } = require('../../dist/database/db.js');
const { connect } = require('./database');
const { summarize, Tally } = require('./stats');

// As src/idempotency/idempotency.interceptor.ts sends it with BEGIN and the claim.
const SAVEPOINT = 'SAVEPOINT idempotent_request';

/** Several statements in one simple-query message, as src/database/db.ts sends them. */
const simple = (client, statements) => client.query(statements.join(';\n'));

/**
 * The part of Db (src/database/db.ts) the repositories use here, on one pg client: named
 * statements stay pg named statements, and the statements a repository asks to have
 * prepared on every connection are collected for the caller to send once.
 */
function clientDb(client) {
  const db = {
    prepared: [],
    prepareOnEveryConnection: (statements) => db.prepared.push(...statements.map(preparation)),
    call: (statement, values) => invocation(statement, values, 'session'),
    rows: async (statement, values = []) =>
      (await client.query(typeof statement === 'string' ? { text: statement, values } : { ...statement, values })).rows,
    one: async (statement, values) => (await db.rows(statement, values))[0] ?? null,
  };
  return db;
}

/** The repositories of a keyed create on one client, their prepared statements sent. */
async function repositoriesOn(client) {
  const db = clientDb(client);
  const repositories = { client, orders: new OrdersRepository(db), keys: new IdempotencyKeysRepository(db) };
  await simple(client, db.prepared);
  return repositories;
}

/**
 * One keyed create, round trip for round trip as the server runs it (pool aside), with
 * the server's own SQL, taken from dist/:
 * the API-key lookup that also reads the stored answer; BEGIN + claim + SAVEPOINT; the
 * order insert; (delete expired +) insert answer + COMMIT.
 */
async function keyedCreate({ client, orders, keys }, merchantId, keyHash, outTradeNo) {
  const scope = { merchantId, environment: 'test', key: randomUUID() };
  const auth = await keys.findApiKeyWithAnswer(keyHash, 'test', scope.key);
  if (!auth || auth.stored) throw new Error('the API key was not found, or a new key was stored');
  try {
    const [, claimed] = await simple(client, ['BEGIN', keys.claimStatement(scope), SAVEPOINT]);
    const claim = keys.toClaim(claimed.rows[0]);
    if (!claim.locked || claim.stored || claim.replacesExpiredAnswer) {
      throw new Error('a new key was found locked or stored');
    }
    const body = { out_trade_no: outTradeNo, amount: 2990, currency: 'USD', subject: 'Annual plan' };
    const order = await orders.insertIfAbsent(
      { merchantId, environment: 'test' },
      { id: newId('ord'), outTradeNo, ...body, description: null, metadata: {}, notifyUrl: null, returnUrl: null },
    );
    if (!order) throw new Error(`out_trade_no ${outTradeNo} was taken`);
    const requestId = `req_${randomBytes(16).toString('hex')}`;
    const response = new ApiResponse(
      201,
      { data: toOrderObject(order), request_id: requestId },
      { Location: `/v1/orders/${order.id}` },
    );
    const incoming = { method: 'POST', path: '/v1/orders', fingerprint: fingerprint(body) };
    await simple(client, [...keys.saveStatements(scope, claim, incoming, response, requestId, 86400), 'COMMIT']);
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
  target: null,
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
    const tally = new Tally();
    const latencies = [];
    let completed = 0;
    let errors = 0;
    let started = performance.now();
    try {
      const sessions = await Promise.all(clients.map(repositoriesOn));
      started = performance.now();
      const deadline = started + seconds * 1000;
      await Promise.all(
        sessions.map(async (session) => {
          while (performance.now() < deadline && errors < 100) {
            const t0 = performance.now();
            try {
              await keyedCreate(session, ctx.server.merchantId, keyHash, `S${ctx.tag}_${(++sequence).toString(36)}`);
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
