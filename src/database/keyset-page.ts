import type { Db } from './db';

export interface KeysetQuery {
  /** Table and the columns to select. */
  table: string;
  columns: string;
  /** Whose rows these are, over $1 … $n, e.g. `merchant_id = $1 AND environment = $2`. */
  where: string;
  params: unknown[];
  /**
   * Which of them to list (`type = $3`), over the parameters after `params`. The cursor
   * need not match it: any of the caller's rows marks a position.
   */
  filter?: { sql: string; params: unknown[] };
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
 * The cursor must be one of the caller's rows (`where`), so it cannot reveal other
 * merchants' data: an unknown cursor gives null, which the caller answers as a 404.
 *
 * The cursor's position is compared in SQL: read into a JS Date, created_at would lose
 * its microseconds, and rows created in the same millisecond as the cursor, just before
 * it, would fall on the wrong side and never be listed. One statement per page; only an
 * empty page asks whether its cursor exists at all.
 */
export async function keysetRows<Row>(db: Db, query: KeysetQuery): Promise<KeysetRows<Row> | null> {
  const params = [...query.params, ...(query.filter?.params ?? [])];
  const filter = query.filter ? `AND ${query.filter.sql}` : '';
  let cursor: string | null = null;
  if (query.startingAfter !== undefined) {
    params.push(query.startingAfter);
    cursor = `SELECT created_at, id FROM ${query.table} WHERE ${query.where} AND id = $${params.length}`;
  }
  params.push(query.limit + 1);
  const rows = await db.rows<Row>(
    `SELECT ${query.columns} FROM ${query.table}
      WHERE ${query.where} ${filter} ${cursor ? `AND (created_at, id) < (${cursor})` : ''}
      ORDER BY created_at DESC, id DESC
      LIMIT $${params.length}`,
    params,
  );
  if (query.startingAfter !== undefined && rows.length === 0) {
    const exists = `SELECT 1 FROM ${query.table} WHERE ${query.where} AND id = $${query.params.length + 1}`;
    if (!(await db.one(exists, [...query.params, query.startingAfter]))) return null;
  }
  return { rows: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
}
