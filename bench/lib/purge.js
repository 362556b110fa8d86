'use strict';
// DESIGN.md §5: create-with-key p99 at 10 connections before and during a purge of
// 1,000,000 expired keys (target: during ÷ before ≤ 1.5), and how fast that purge goes.
// The purge is IdempotencyPurgeService from dist/, the code the cron job and
// `npm run purge` run, on a DataSource of its own as the CLI has (IdempotencyPurgeService.on).
const { Client } = require('pg');
const { DataSource } = require('typeorm');
const { dataSourceOptions } = require('../../dist/database/data-source-options.js');
const { IdempotencyPurgeService } = require('../../dist/idempotency/idempotency-purge.service.js');

const ROWS = 1_000_000;

/** 1 M expired answers of another merchant, older than anything the server stores. */
async function insertExpired(url) {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(
      `INSERT INTO idempotency_keys (merchant_id, environment, key, method, path, fingerprint,
                                     response_status, response_body, request_id, expires_at)
       SELECT 'mch_bench_purge', 'test', 'expired-' || g, 'POST', '/v1/orders', sha256(g::text::bytea), 201,
              repeat('x', 400), 'req_' || g, now() - interval '1 hour' - g * interval '1 millisecond'
         FROM generate_series(1, $1::int) AS g`,
      [ROWS],
    );
    await client.query('VACUUM ANALYZE idempotency_keys');
  } finally {
    await client.end();
  }
}

function purgeImpact(createWithKey) {
  return {
    id: 'purge',
    title: 'create order, new key, vs purge of 1 M keys',
    short: 'create + key, purge',
    expect: '201',
    connections: [10],
    // The purge happens once; the harness's warm-up would spend the expired rows.
    warmup: false,
    async run(ctx, connections, seconds) {
      ctx.log(`  inserting ${ROWS.toLocaleString('en')} expired keys`);
      await insertExpired(ctx.database.url);
      const before = await createWithKey.run(ctx, connections, seconds);

      const dataSource = new DataSource(dataSourceOptions(ctx.database.url, { max: 1 }));
      await dataSource.initialize();
      try {
        const purging = IdempotencyPurgeService.on(dataSource, { mode: 'session', poolSize: 1 }).purge();
        // Measured exactly while the purge runs (bounded by `seconds` × 6).
        const during = await createWithKey.run(ctx, connections, seconds * 6, purging);
        const result = await purging;
        if (result.skipped || !result.finished || result.deleted < ROWS) {
          throw new Error(`the purge did not remove the ${ROWS} expired keys: ${JSON.stringify(result)}`);
        }
        const rowsPerSecond = Math.round(result.deleted / (result.durationMs / 1000));
        ctx.log(
          `  purge: ${result.deleted.toLocaleString('en')} keys in ${(result.durationMs / 1000).toFixed(1)} s = ${rowsPerSecond.toLocaleString('en')} rows/s`,
        );
        ctx.purge = { deleted: result.deleted, seconds: result.durationMs / 1000, rowsPerSecond };
        return [
          {
            id: 'purge-before',
            title: 'create order, new key, before purge',
            short: 'create + key, before purge',
            ...before,
          },
          {
            id: 'purge-during',
            title: `create order, new key, during purge (${rowsPerSecond.toLocaleString('en')} rows/s)`,
            short: 'create + key, during purge',
            ...during,
          },
        ];
      } finally {
        await dataSource.destroy();
      }
    },
  };
}

module.exports = { purgeImpact };
