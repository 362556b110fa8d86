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
const { INSERT_ORDER, OrdersRepository } = require('../../dist/orders/orders.repository.js');
const { IdempotencyKeysRepository } = require('../../dist/idempotency/idempotency-keys.repository.js');
const { ApiKeysRepository } = require('../../dist/merchants/api-keys.repository.js');
const { ApiResponse } = require('../../dist/common/http/api-response.js');
const { invocation, preparation } = require('../../dist/database/db.js');
const { literal } = require('../../dist/database/literal.js');
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
  const repositories = {
    client,
    orders: new OrdersRepository(db),
    keys: new IdempotencyKeysRepository(db),
    apiKeys: new ApiKeysRepository(db),
  };
  await simple(client, [...db.prepared, preparation(ORDER_INSERT)]);
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
    const body = orderFields(outTradeNo);
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

/**
 * An unkeyed create as the server sends it: the API-key lookup, then the order insert in
 * autocommit (src/orders/orders.service.ts). The peer sends the same two statements.
 */
async function unkeyedCreate({ orders, apiKeys }, merchantId, keyHash, outTradeNo) {
  const auth = await apiKeys.findActive(keyHash);
  if (!auth) throw new Error('the API key was not found');
  const order = await orders.insertIfAbsent(
    { merchantId, environment: 'test' },
    {
      id: newId('ord'),
      outTradeNo,
      ...orderFields(outTradeNo),
      description: null,
      metadata: {},
      notifyUrl: null,
      returnUrl: null,
    },
  );
  if (!order) throw new Error(`out_trade_no ${outTradeNo} was taken`);
}

/**
 * Not the server's SQL: a bound. The least PostgreSQL work a keyed create can cost while
 * its answer is stored with its order in one transaction (docs/idempotency.md): after the same
 * lookup, ONE autocommit statement takes the key's advisory lock, inserts the order and
 * inserts the answer, which the client computed beforehand (the order's created_at from
 * the client's clock). No BEGIN, SAVEPOINT, COMMIT or extra round trip. docs/benchmarks.md
 * ("The least a stored answer costs") says why the service does not send it.
 */
const ONE_STATEMENT = {
  name: 'bench_keyed_create_one_statement',
  text: `WITH claim AS (SELECT pg_try_advisory_xact_lock(hashtextextended($2::text || $3::text || $12::text, 0)) AS locked),
              o AS (INSERT INTO orders (id, merchant_id, environment, out_trade_no, amount, currency, subject,
                                        description, metadata, notify_url, return_url, created_at)
                    SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $17 FROM claim WHERE claim.locked
                    ON CONFLICT ON CONSTRAINT orders_out_trade_no_key DO NOTHING
                    RETURNING id),
              answer AS (INSERT INTO idempotency_keys
                           (merchant_id, environment, key, method, path, fingerprint, response_status,
                            response_body, response_headers, request_id, expires_at)
                         SELECT $2, $3, $12, 'POST', '/v1/orders', $13, 201, $14, $15, $16,
                                now() + interval '86400 seconds' FROM o)
         SELECT id FROM o`,
};

async function oneStatementKeyedCreate({ client, keys }, merchantId, keyHash, outTradeNo) {
  const key = randomUUID();
  const auth = await keys.findApiKeyWithAnswer(keyHash, 'test', key);
  if (!auth || auth.stored) throw new Error('the API key was not found, or a new key was stored');
  const id = newId('ord');
  const createdAt = new Date();
  const requestId = `req_${randomBytes(16).toString('hex')}`;
  const fields = orderFields(outTradeNo);
  const order = {
    id,
    object: 'order',
    ...fields,
    description: null,
    status: 'pending',
    amount_refunded: 0,
    environment: 'test',
    metadata: {},
    notify_url: null,
    return_url: null,
    created_at: createdAt.toISOString(),
    paid_at: null,
    closed_at: null,
  };
  const body = JSON.stringify({ data: order, request_id: requestId });
  const { rows } = await client.query({
    ...ONE_STATEMENT,
    values: [
      ...[id, merchantId, 'test', outTradeNo, fields.amount, fields.currency, fields.subject, null, {}, null, null],
      ...[key, fingerprint(fields), body, JSON.stringify({ Location: `/v1/orders/${id}` }), requestId, createdAt],
    ],
  });
  if (rows.length !== 1) throw new Error('the one-statement create stored nothing');
}

/**
 * Not the server's SQL either: what a keyed create costs with its opening sent in the same
 * message as the handler's first statement (three round trips instead of four): the
 * lookup; BEGIN + claim + SAVEPOINT + the order insert, EXECUTEd from a plan the
 * connection PREPAREd; the answer + COMMIT.
 */
const ORDER_INSERT = {
  name: 'bench_insert_order',
  types: ['text', 'text', 'text', 'text', 'bigint', 'text', 'text', 'text', 'jsonb', 'text', 'text'],
  text: INSERT_ORDER.text,
};

async function pipelinedOpeningKeyedCreate({ client, keys }, merchantId, keyHash, outTradeNo) {
  const scope = { merchantId, environment: 'test', key: randomUUID() };
  const auth = await keys.findApiKeyWithAnswer(keyHash, 'test', scope.key);
  if (!auth || auth.stored) throw new Error('the API key was not found, or a new key was stored');
  try {
    const fields = orderFields(outTradeNo);
    const values = [newId('ord'), merchantId, 'test', outTradeNo, fields.amount, fields.currency, fields.subject];
    const insert = `EXECUTE ${ORDER_INSERT.name}(${values.map((value) => literal(value)).join(', ')}, NULL, '{}', NULL, NULL)`;
    const [, claimed, , inserted] = await simple(client, ['BEGIN', keys.claimStatement(scope), SAVEPOINT, insert]);
    const claim = keys.toClaim(claimed.rows[0]);
    if (!claim.locked || claim.stored || claim.replacesExpiredAnswer) {
      throw new Error('a new key was found locked or stored');
    }
    const order = inserted.rows[0];
    if (!order) throw new Error(`out_trade_no ${outTradeNo} was taken`);
    const requestId = `req_${randomBytes(16).toString('hex')}`;
    const response = new ApiResponse(
      201,
      { data: toOrderObject(order), request_id: requestId },
      { Location: `/v1/orders/${order.id}` },
    );
    const incoming = { method: 'POST', path: '/v1/orders', fingerprint: fingerprint(fields) };
    await simple(client, [...keys.saveStatements(scope, claim, incoming, response, requestId, 86400), 'COMMIT']);
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

function orderFields(outTradeNo) {
  return { out_trade_no: outTradeNo, amount: 2990, currency: 'USD', subject: 'Annual plan' };
}

let sequence = 0;

/**
 * A scenario that sends `create` from as many pg clients as the HTTP run has connections,
 * each with the server's per-connection settings and prepared statements.
 */
function sqlScenario(names, create) {
  return {
    ...names,
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
                await create(session, ctx.server.merchantId, keyHash, `S${ctx.tag}_${(++sequence).toString(36)}`);
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
}

const sqlCeiling = sqlScenario(
  { id: 'sql-ceiling', title: 'same SQL transaction via pg (ceiling)', short: 'SQL ceiling (pg)' },
  keyedCreate,
);

// Run only when named in BENCH_SCENARIOS (optIn): measurements of where a keyed create's
// PostgreSQL work could go, not figures of the service.
const sqlUnkeyed = sqlScenario(
  { id: 'sql-unkeyed', title: 'unkeyed create SQL via pg', short: 'SQL unkeyed (pg)', optIn: true },
  unkeyedCreate,
);
const sqlOneStatement = sqlScenario(
  {
    id: 'sql-one-statement',
    title: 'keyed create as one statement via pg (bound)',
    short: 'SQL one statement (pg)',
    optIn: true,
  },
  oneStatementKeyedCreate,
);

const sqlPipelinedOpening = sqlScenario(
  {
    id: 'sql-pipelined-opening',
    title: 'keyed create, opening sent with the insert, via pg',
    short: 'SQL opening + insert (pg)',
    optIn: true,
  },
  pipelinedOpeningKeyedCreate,
);

module.exports = { sqlCeiling, sqlUnkeyed, sqlPipelinedOpening, sqlOneStatement };
