'use strict';
// The bench's peer: what a NestJS user would build instead of this service. A minimal
// NestJS 12 + Fastify + `pg` app whose POST /v1/orders does the same work as ours (the
// API-key lookup by SHA-256 of X-Api-Key in our api_keys table, then the same order
// INSERT … ON CONFLICT DO NOTHING RETURNING), made idempotent by @node-idempotency/nestjs
// (its interceptor, keyed by Idempotency-Key, with Redis or memory storage).
// docs/benchmarks.md says what it does not guarantee that this service does.
//
// Plain CommonJS so that it needs no build step: decorators are applied with
// Reflect.decorate, as TypeScript's output does.
//
// Environment: PORT, DATABASE_URL, PEER_STORAGE (redis | memory), REDIS_URL,
// PEER_KEY_PREFIX (Redis key prefix; the peer deletes its keys when it stops).
require('reflect-metadata');
const { createHash, randomBytes } = require('node:crypto');
const common = require('@nestjs/common');
const { NestFactory } = require('@nestjs/core');
const { FastifyAdapter } = require('@nestjs/platform-fastify');
const { Idempotent, NodeIdempotencyModule } = require('@node-idempotency/nestjs');
const { Pool } = require('pg');

const { Body, Controller, HttpCode, Inject, Injectable, Module, Post, Req, Res, UseGuards } = common;
const POOL = 'PEER_PG_POOL';
const STORAGE = 'node_idempotency:IDEMPOTENCY_STORAGE';
const KEY_PREFIX = process.env.PEER_KEY_PREFIX || 'kuko-bench-peer';

// The same statements as ours (src/merchants/api-keys.repository.ts, src/orders/orders.repository.ts).
const FIND_API_KEY = {
  name: 'peer_api_key_lookup',
  text: 'SELECT merchant_id, key_hash FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL',
};
const ORDER_COLUMNS = `id, merchant_id, environment, out_trade_no, amount, currency, subject, description,
  status, amount_refunded, metadata, notify_url, return_url, created_at, paid_at, closed_at`;
const INSERT_ORDER = {
  name: 'peer_insert_order',
  text: `INSERT INTO orders (id, merchant_id, environment, out_trade_no, amount, currency, subject, description,
                            metadata, notify_url, return_url)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
         ON CONFLICT ON CONSTRAINT orders_out_trade_no_key DO NOTHING
         RETURNING ${ORDER_COLUMNS}`,
};
const API_KEY = /^kuko_(test|live)_[A-Za-z0-9_-]{32}$/;
const REFERENCE = /^[A-Za-z0-9_-]{1,64}$/;

class ApiKeyGuard {
  constructor(pool) {
    this.pool = pool;
  }

  async canActivate(context) {
    const request = context.switchToHttp().getRequest();
    const key = request.headers['x-api-key'];
    const match = typeof key === 'string' ? API_KEY.exec(key) : null;
    if (!match) throw new common.UnauthorizedException('invalid API key');
    const hash = createHash('sha256').update(key).digest();
    const { rows } = await this.pool.query({ ...FIND_API_KEY, values: [hash] });
    if (rows.length === 0) throw new common.UnauthorizedException('invalid API key');
    request.merchant = { id: rows[0].merchant_id, environment: match[1] };
    return true;
  }
}
Reflect.decorate([Injectable()], ApiKeyGuard);
Inject(POOL)(ApiKeyGuard, undefined, 0);

/** Hand-written checks of the fields the bench sends (a minimal app; no class-validator). */
function validOrder(body) {
  const ok =
    body &&
    typeof body === 'object' &&
    typeof body.out_trade_no === 'string' &&
    REFERENCE.test(body.out_trade_no) &&
    Number.isInteger(body.amount) &&
    body.amount >= 1 &&
    body.amount <= 100_000_000_000 &&
    typeof body.currency === 'string' &&
    /^[A-Z]{3}$/.test(body.currency) &&
    typeof body.subject === 'string' &&
    body.subject.length >= 1 &&
    body.subject.length <= 256;
  if (!ok) throw new common.BadRequestException('invalid order');
  return body;
}

class OrdersController {
  constructor(pool) {
    this.pool = pool;
  }

  async create(body, request, reply) {
    const order = validOrder(body);
    const { merchant } = request;
    const id = `ord_${randomBytes(16).toString('hex')}`;
    const values = [id, merchant.id, merchant.environment, order.out_trade_no, order.amount, order.currency];
    values.push(order.subject, order.description ?? null, order.metadata ?? {}, null, null);
    const { rows } = await this.pool.query({ ...INSERT_ORDER, values });
    if (rows.length === 0) throw new common.ConflictException('out_trade_no already used');
    reply.header('Location', `/v1/orders/${id}`);
    return { data: toOrderObject(rows[0]), request_id: `req_${randomBytes(16).toString('hex')}` };
  }
}
Reflect.decorate([Controller('v1')], OrdersController);
Inject(POOL)(OrdersController, undefined, 0);
Body()(OrdersController.prototype, 'create', 0);
Req()(OrdersController.prototype, 'create', 1);
Res({ passthrough: true })(OrdersController.prototype, 'create', 2);
decorateMethod(OrdersController, 'create', [Post('orders'), HttpCode(201), UseGuards(ApiKeyGuard), Idempotent()]);

function toOrderObject(row) {
  return {
    id: row.id,
    object: 'order',
    out_trade_no: row.out_trade_no,
    amount: Number(row.amount),
    currency: row.currency,
    subject: row.subject,
    description: row.description,
    status: row.status,
    amount_refunded: Number(row.amount_refunded),
    environment: row.environment,
    metadata: row.metadata,
    notify_url: row.notify_url,
    return_url: row.return_url,
    created_at: row.created_at.toISOString(),
    paid_at: row.paid_at?.toISOString() ?? null,
    closed_at: row.closed_at?.toISOString() ?? null,
  };
}

function decorateMethod(target, name, decorators) {
  const descriptor = Object.getOwnPropertyDescriptor(target.prototype, name);
  Object.defineProperty(target.prototype, name, Reflect.decorate(decorators, target.prototype, name, descriptor));
}

function storageOptions(env) {
  if (env.PEER_STORAGE === 'memory') return { adapter: 'memory' };
  return { adapter: 'redis', options: { url: env.REDIS_URL || 'redis://127.0.0.1:6379' } };
}

/** Removes the keys this peer stored in Redis (a shared server), in batches. */
async function deleteStoredKeys(app) {
  const client = app.get(STORAGE, { strict: false })?.client;
  if (!client?.isOpen) return 0;
  let deleted = 0;
  let batch = [];
  for await (const key of client.scanIterator({ MATCH: `${KEY_PREFIX}:*`, COUNT: 1000 })) {
    batch.push(key);
    if (batch.length === 1000) [deleted, batch] = [deleted + (await client.unlink(batch)), []];
  }
  if (batch.length) deleted += await client.unlink(batch);
  return deleted;
}

async function main(env = process.env) {
  const pool = new Pool({ connectionString: env.DATABASE_URL, max: 20, connectionTimeoutMillis: 5000 });
  class PeerModule {}
  Reflect.decorate(
    [
      Module({
        imports: [
          // cacheTTLMS: the package's default (24 h), as a user would keep it.
          NodeIdempotencyModule.forRootAsync({ storage: storageOptions(env), cacheKeyPrefix: KEY_PREFIX }),
        ],
        controllers: [OrdersController],
        providers: [{ provide: POOL, useValue: pool }, ApiKeyGuard],
      }),
    ],
    PeerModule,
  );
  const app = await NestFactory.create(PeerModule, new FastifyAdapter(), { logger: ['error', 'warn'] });
  await app.listen(Number(env.PORT || 3100), '127.0.0.1');
  process.stdout.write(`Listening on http://127.0.0.1:${env.PORT} (storage ${storageOptions(env).adapter})\n`);

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    try {
      const deleted = await deleteStoredKeys(app);
      process.stdout.write(`deleted ${deleted} idempotency keys under ${KEY_PREFIX}:*\n`);
      await app.close();
      await pool.end();
    } finally {
      process.exit(0);
    }
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((error) => {
  process.stderr.write(`peer failed: ${error.stack ?? error}\n`);
  process.exit(1);
});
