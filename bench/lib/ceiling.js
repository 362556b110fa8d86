'use strict';
// The database-bound ceiling: the SQL transaction of a keyed create, issued straight to
// PostgreSQL with `pg` from N concurrent clients (N = the HTTP run's connections), no
// HTTP and no framework in between. The statements are copied from src/ and checked
// against it at every run (sqlDrift), so the ceiling cannot silently measure an older
// protocol than the server runs.
const { randomBytes, randomUUID } = require('node:crypto');
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const { performance } = require('node:perf_hooks');
const { fingerprint } = require('../../dist/idempotency/canonical-json.js');
const { newId } = require('../../dist/common/ids.js');
const { hashApiKey } = require('../../dist/merchants/api-key.js');
const { toOrderObject } = require('../../dist/orders/order.js');
const { connect } = require('./database');
const { summarize, Tally } = require('./stats');

const ROOT = join(__dirname, '..', '..');

// Verbatim from the source files named (whitespace aside); ${…} are the source's own
// interpolations, filled in by fill() below.
const SOURCES = {
  lookup: [
    'src/common/auth/api-key.guard.ts',
    'SELECT merchant_id, key_hash FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL',
  ],
  LOCK_ID: ['src/idempotency/idempotency.store.ts', "hashtextextended($1 || '/' || $2 || '/' || $3, 0)"],
  claim: [
    'src/idempotency/idempotency.store.ts',
    `SELECT pg_try_advisory_xact_lock(\${LOCK_ID}) AS locked, k.*
       FROM (SELECT 1) AS one
       LEFT JOIN idempotency_keys k
         ON k.merchant_id = $1 AND k.environment = $2 AND k.key = $3 AND k.expires_at > now()`,
  ],
  savepoint: ['src/idempotency/idempotency.interceptor.ts', 'SAVEPOINT idempotent_request'],
  ORDER_COLUMNS: [
    'src/orders/order.ts',
    `id, merchant_id, environment, out_trade_no, amount, currency, subject, description,
     status, amount_refunded, metadata, notify_url, return_url, created_at, paid_at, closed_at`,
  ],
  insertOrder: [
    'src/orders/orders.service.ts',
    `INSERT INTO orders (id, merchant_id, environment, out_trade_no, amount, currency, subject, description,
                         metadata, notify_url, return_url)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
     ON CONFLICT ON CONSTRAINT orders_out_trade_no_key DO NOTHING
     RETURNING \${ORDER_COLUMNS}`,
  ],
  saveKey: [
    'src/idempotency/idempotency.store.ts',
    `INSERT INTO idempotency_keys AS k
            (merchant_id, environment, key, method, path, fingerprint,
             response_status, response_body, response_headers, request_id, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now() + make_interval(secs => $11))
     ON CONFLICT (merchant_id, environment, key) DO UPDATE
        SET method = EXCLUDED.method, path = EXCLUDED.path, fingerprint = EXCLUDED.fingerprint,
            response_status = EXCLUDED.response_status, response_body = EXCLUDED.response_body,
            response_headers = EXCLUDED.response_headers, request_id = EXCLUDED.request_id,
            created_at = now(), expires_at = EXCLUDED.expires_at
      WHERE k.expires_at <= now()
     RETURNING 1`,
  ],
};

const fill = (sql) => sql.replace(/\$\{(\w+)\}/g, (_, name) => SOURCES[name][1]);
const SQL = Object.fromEntries(Object.entries(SOURCES).map(([name, [, sql]]) => [name, fill(sql)]));
// TypeORM's PostgresQueryRunner opens the request's transaction with START TRANSACTION.
SQL.begin = 'START TRANSACTION';
SQL.commit = 'COMMIT';

/** Names of the copied statements no longer found in their source file. */
function sqlDrift() {
  const squash = (text) => text.replace(/\s+/g, ' ');
  return Object.entries(SOURCES)
    .filter(([, [file, sql]]) => !squash(readFileSync(join(ROOT, file), 'utf8')).includes(squash(sql)))
    .map(([name, [file]]) => `${name} (${file})`);
}

/** One keyed create, statement for statement as the server runs it (pool aside). */
async function keyedCreate(client, merchantId, keyHash, outTradeNo) {
  await client.query(SQL.lookup, [keyHash]);
  await client.query(SQL.begin);
  try {
    const key = randomUUID();
    const claim = (await client.query(SQL.claim, [merchantId, 'test', key])).rows[0];
    if (!claim.locked || claim.method !== null) throw new Error('a new key was found locked or stored');
    await client.query(SQL.savepoint);
    const body = { out_trade_no: outTradeNo, amount: 2990, currency: 'USD', subject: 'Annual plan' };
    const params = [newId('ord'), merchantId, 'test', outTradeNo, 2990, 'USD', 'Annual plan', null, {}, null, null];
    const order = (await client.query(SQL.insertOrder, params)).rows[0];
    if (!order) throw new Error(`out_trade_no ${outTradeNo} was taken`);
    const requestId = `req_${randomBytes(12).toString('hex')}`;
    const response = JSON.stringify({ data: toOrderObject(order), request_id: requestId });
    const saved = await client.query(SQL.saveKey, [
      merchantId, 'test', key, 'POST', '/v1/orders', fingerprint(body),
      201, response, { Location: `/v1/orders/${order.id}` }, requestId, 86400,
    ]);
    if (saved.rowCount !== 1) throw new Error('the key was not stored');
    await client.query(SQL.commit);
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

module.exports = { sqlCeiling, sqlDrift, SQL };
