'use strict';
// The scenarios, in the order they run at each connection count. A scenario is a small
// object: { id, title, short (chart label), expect, prepare?(ctx), run(ctx, connections,
// seconds) }. run() measures one run and returns the figures of stats.summarize(); the
// harness calls it once for the warm-up (figures checked, then discarded; `warmup: false`
// skips it) and once for real. A scenario may list `connections` to run only at some
// counts, and run() may return an array of { id, title, ...figures } to report several
// rows (e.g. before / during). ctx: { server, database, settings, cleanup, log, tag }.
const { randomUUID } = require('node:crypto');
const { runHttp, header } = require('./load');
const { Tally } = require('./stats');
const { webhookDeliveries } = require('./webhooks');
const { sqlCeiling } = require('./ceiling');

let sequence = 0;

/** A merchant order number never used before in this bench (≤ 64 chars of [A-Za-z0-9_-]). */
function nextTradeNo(ctx) {
  return `B${ctx.tag}_${(++sequence).toString(36)}`;
}

function orderBody(outTradeNo) {
  return JSON.stringify({ out_trade_no: outTradeNo, amount: 2990, currency: 'USD', subject: 'Annual plan' });
}

function apiHeaders(ctx, extra = {}) {
  return { 'content-type': 'application/json', 'x-api-key': ctx.server.apiKey, ...extra };
}

/** POST /v1/orders with a unique out_trade_no per request, and a new key per request if keyed. */
function createOrders({ keyed }) {
  return (ctx, connections, seconds) => {
    const tally = new Tally();
    return runHttp({
      url: ctx.server.url,
      connections,
      seconds,
      expectStatus: 201,
      tally,
      request: {
        method: 'POST',
        path: '/v1/orders',
        headers: apiHeaders(ctx),
        setupRequest: (request) => ({
          ...request,
          headers: keyed ? { ...request.headers, 'idempotency-key': randomUUID() } : { ...request.headers },
          body: orderBody(nextTradeNo(ctx)),
        }),
        onResponse(status, body, context, headers) {
          if (header(headers, 'idempotent-replayed')) tally.bad('a new key was answered as a replay');
        },
      },
    });
  };
}

const createWithKey = {
  id: 'create-key',
  title: 'create order, new Idempotency-Key',
  short: 'create + new key',
  expect: '201',
  run: createOrders({ keyed: true }),
};

const createWithoutKey = {
  id: 'create-nokey',
  title: 'create order, no Idempotency-Key',
  short: 'create, no key',
  expect: '201',
  run: createOrders({ keyed: false }),
};

/** One key and one body, created once; every request after that is a replay. */
const replay = {
  id: 'replay',
  title: 'replay (same key, same body)',
  short: 'replay',
  expect: '201 + Idempotent-Replayed',
  async prepare(ctx) {
    const key = randomUUID();
    const body = orderBody(nextTradeNo(ctx));
    const response = await fetch(`${ctx.server.url}/v1/orders`, {
      method: 'POST',
      headers: apiHeaders(ctx, { 'idempotency-key': key }),
      body,
      signal: AbortSignal.timeout(10_000),
    });
    if (response.status !== 201) throw new Error(`the first create of the replay key answered ${response.status}`);
    ctx.replay = { key, body };
  },
  run(ctx, connections, seconds) {
    const tally = new Tally();
    return runHttp({
      url: ctx.server.url,
      connections,
      seconds,
      expectStatus: 201,
      tally,
      request: {
        method: 'POST',
        path: '/v1/orders',
        headers: apiHeaders(ctx, { 'idempotency-key': ctx.replay.key }),
        body: ctx.replay.body,
        onResponse(status, body, context, headers) {
          if (status === 201 && header(headers, 'idempotent-replayed') !== 'true') {
            tally.bad('a 201 without Idempotent-Replayed: true (executed again?)');
          }
        },
      },
    });
  },
};

// ─── EXTENSION POINT: the purge scenario (to be added with the purge CLI) ─────────────
// DESIGN.md §5: "create-with-key p99 at 10 connections before and during a purge of
// 1,000,000 expired keys"; target: p99 during ÷ p99 before ≤ 1.5. A sketch:
//
//   const purge = {
//     id: 'purge',
//     title: 'create order, new key, vs purge',
//     expect: '201',
//     connections: [10],
//     async prepare(ctx) { /* INSERT 1 M expired rows into idempotency_keys for
//                             ctx.server.merchantId (generate_series, expires_at in the past) */ },
//     async run(ctx, connections, seconds) {
//       const before = await createWithKey.run(ctx, connections, seconds);
//       // spawn `node dist/idempotency/purge.cli.js` with DATABASE_URL = ctx.database.url
//       // (register it with ctx.cleanup.push so it is stopped on failure), and measure
//       // createWithKey.run(…) while it runs (bounded: stop measuring at `seconds` or when
//       // the purge exits, whichever comes first); check that it deleted the rows.
//       return [{ id: 'purge-before', title: '…before purge', ...before },
//               { id: 'purge-during', title: '…during purge', ...during }];
//     },
//   };
//
// Then add it to SCENARIOS below and its ratio to RATIOS in report.js (an entry is
// already sketched there). The warm-up run calls run() too: skip the purge when
// seconds < ctx.settings.seconds, or set `warmup: false` on the scenario.
// ───────────────────────────────────────────────────────────────────────────────────────

const SCENARIOS = [createWithKey, createWithoutKey, replay, webhookDeliveries, sqlCeiling];

module.exports = { SCENARIOS, nextTradeNo, orderBody };
