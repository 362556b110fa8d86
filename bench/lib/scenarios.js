'use strict';
// The scenarios, in the order they run at each connection count. A scenario is a small
// object: { id, title, short (chart label), expect, prepare?(ctx), run(ctx, connections,
// seconds) }. run() measures one run and returns the figures of stats.summarize(); the
// harness calls it once for the warm-up (figures checked, then discarded; `warmup: false`
// skips it) and once for real. A scenario may list `connections` to run only at some
// counts, and run() may return an array of { id, title, ...figures } to report several
// rows (e.g. before / during). ctx: { server, peer, database, settings, cleanup, log, tag }.
// `primes: true`: also run once, before any measured run, to warm its process up.
// `target`: the process whose CPU the harness measures ('server', the default, or another
// server of ctx: 'peer', 'pooled', 'queueOnly'; null for none). `peer: true`: the scenario
// drives the peer app (bench/peer/) and is skipped when the peer cannot run;
// `pooled: true`: it drives a second server behind PgBouncer and is skipped when
// pgbouncer is not installed. `optIn: true`: it runs only when BENCH_SCENARIOS names it.
const { randomUUID } = require('node:crypto');
const { runHttp, header } = require('./load');
const { Tally } = require('./stats');
const { webhookDeliveries } = require('./webhooks');
const { sqlCeiling, sqlOneStatement, sqlPipelinedOpening, sqlUnkeyed } = require('./ceiling');
const { purgeImpact } = require('./purge');
const { notificationScenarios } = require('./notifications');

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
function createOrderRequest(ctx, keyed, tally) {
  return {
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
  };
}

function createOrders({ keyed, target = 'server' }) {
  return (ctx, connections, seconds, until) => {
    const tally = new Tally();
    return runHttp({
      url: ctx[target].url,
      connections,
      seconds,
      expectStatus: 201,
      tally,
      until,
      request: createOrderRequest(ctx, keyed, tally),
    });
  };
}

const createWithKey = {
  id: 'create-key',
  title: 'create order, new Idempotency-Key',
  short: 'create + new key',
  expect: '201',
  primes: true,
  run: createOrders({ keyed: true }),
};

/** The same keyed creates, sent to a second server that reaches PostgreSQL through PgBouncer. */
const createWithKeyPooled = {
  id: 'create-key-pooled',
  title: 'create order, new Idempotency-Key, via PgBouncer',
  short: 'create + new key, PgBouncer',
  expect: '201',
  primes: true,
  target: 'pooled',
  pooled: true,
  run: createOrders({ keyed: true, target: 'pooled' }),
};

/**
 * The unkeyed creates, via PgBouncer (opt-in): how a change to the pooled path of a create
 * without a transaction weighs, such as a shared write slot's claim (docs/decisions.md).
 */
const createWithoutKeyPooled = {
  id: 'create-nokey-pooled',
  title: 'create order, no Idempotency-Key, via PgBouncer',
  short: 'create, no key, PgBouncer',
  expect: '201',
  primes: true,
  target: 'pooled',
  pooled: true,
  optIn: true,
  run: createOrders({ keyed: false, target: 'pooled' }),
};

const createWithoutKey = {
  id: 'create-nokey',
  title: 'create order, no Idempotency-Key',
  short: 'create, no key',
  expect: '201',
  primes: true,
  run: createOrders({ keyed: false }),
};

/** One key and one body, created once; every request after that is a replay. */
const replay = replayOf('server', {
  id: 'replay',
  title: 'replay (same key, same body)',
  short: 'replay',
});

function replayOf(target, names) {
  return {
    ...names,
    expect: '201 + Idempotent-Replayed',
    target,
    peer: target === 'peer',
    async prepare(ctx) {
      const key = randomUUID();
      const body = orderBody(nextTradeNo(ctx));
      const response = await fetch(`${ctx[target].url}/v1/orders`, {
        method: 'POST',
        headers: apiHeaders(ctx, { 'idempotency-key': key }),
        body,
        signal: AbortSignal.timeout(10_000),
      });
      if (response.status !== 201) throw new Error(`the first create of the replay key answered ${response.status}`);
      ctx.replays = { ...ctx.replays, [target]: { key, body } };
    },
    run(ctx, connections, seconds) {
      const tally = new Tally();
      return runHttp({
        url: ctx[target].url,
        connections,
        seconds,
        expectStatus: 201,
        tally,
        request: {
          method: 'POST',
          path: '/v1/orders',
          headers: apiHeaders(ctx, { 'idempotency-key': ctx.replays[target].key }),
          body: ctx.replays[target].body,
          onResponse(status, body, context, headers) {
            if (status === 201 && header(headers, 'idempotent-replayed') !== 'true') {
              tally.bad('a 201 without Idempotent-Replayed: true (executed again?)');
            }
          },
        },
      });
    },
  };
}

// The peer (bench/peer/): the same requests to a NestJS app using @node-idempotency/nestjs.
const peerCreateWithKey = {
  id: 'peer-create-key',
  title: 'peer: create order, new Idempotency-Key',
  short: 'peer, create + new key',
  expect: '201',
  primes: true,
  target: 'peer',
  peer: true,
  run: createOrders({ keyed: true, target: 'peer' }),
};

const peerCreateWithoutKey = {
  id: 'peer-create-nokey',
  title: 'peer: create order, no Idempotency-Key',
  short: 'peer, create + no key',
  expect: '201',
  primes: true,
  target: 'peer',
  peer: true,
  run: createOrders({ keyed: false, target: 'peer' }),
};

const peerReplay = replayOf('peer', {
  id: 'peer-replay',
  title: 'peer: replay (same key, same body)',
  short: 'peer, replay',
});

// Each peer scenario runs right after its counterpart, so that a ratio compares two runs
// seconds apart on this shared machine, and each app meets its first load equally cold.
const SCENARIOS = [
  createWithKey,
  peerCreateWithKey,
  createWithKeyPooled,
  createWithoutKeyPooled,
  createWithoutKey,
  peerCreateWithoutKey,
  replay,
  peerReplay,
  ...webhookDeliveries,
  sqlCeiling,
  sqlUnkeyed,
  sqlPipelinedOpening,
  sqlOneStatement,
  purgeImpact(createWithKey),
  ...notificationScenarios,
];

module.exports = { SCENARIOS, createOrderRequest, nextTradeNo, orderBody };
