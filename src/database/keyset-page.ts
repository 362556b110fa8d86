import type { Db } from './db';

export interface KeysetQuery {
  /** Table and the columns to select. */
  table: string;
  columns: string;
  /** Filter over $1 … $n, e.g. `merchant_id = $1 AND environment = $2`. */
  where: string;
  params: unknown[];
  limit: number;
  /** The last id of the previous page. */
  startingAfter?: string;
}

export interface KeysetRows<Row> {
  rows: Row[];
  hasMore: boolean;
}

/**
 * Newest first by (created_at, id), the cursor being the last id of the previous page.
 * The cursor must itself match the filter, so it cannot reveal other merchants' data:
 * an unknown cursor gives null, which the caller answers as a 404.
 *
 * The cursor's position is compared in SQL: read into a JS Date, created_at would lose
 * its microseconds, and rows created in the same millisecond as the cursor, just before
 * it, would fall on the wrong side and never be listed. One statement per page; only an
 * empty page asks whether its cursor exists at all.
 */
export async function keysetRows<Row>(db: Db, query: KeysetQuery): Promise<KeysetRows<Row> | null> {
  const params = [...query.params];
  let cursor: string | null = null;
  if (query.startingAfter !== undefined) {
    params.push(query.startingAfter);
    cursor = `SELECT created_at, id FROM ${query.table} WHERE ${query.where} AND id = $${params.length}`;
  }
  params.push(query.limit + 1);
  const rows = await db.rows<Row>(
    `SELECT ${query.columns} FROM ${query.table}
      WHERE ${query.where} ${cursor ? `AND (created_at, id) < (${cursor})` : ''}
      ORDER BY created_at DESC, id DESC
      LIMIT $${params.length}`,
    params,
  );
  if (cursor && rows.length === 0 && !(await db.one(cursor, params.slice(0, -1)))) return null;
  return { rows: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
}
