import type { Db } from '../database/db';

/**
 * Read at each scrape: the purge's backlog seen from the table, whichever instance or
 * external scheduler runs the purge. min() walks the expires_at index, so it costs one
 * index probe however large the table is.
 */
export async function oldestExpiredKeyAgeSeconds(db: Db): Promise<number> {
  const row = await db.one<{ age: number | null }>(
    `SELECT extract(epoch FROM now() - min(expires_at))::float8 AS age
       FROM idempotency_keys WHERE expires_at <= now()`,
  );
  return row?.age ?? 0;
}
