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
 */
export async function keysetRows<Row>(db: Db, query: KeysetQuery): Promise<KeysetRows<Row> | null> {
  const params = [...query.params];
  let after = '';
  if (query.startingAfter !== undefined) {
    const cursor = await db.one<{ created_at: Date; id: string }>(
      `SELECT created_at, id FROM ${query.table} WHERE ${query.where} AND id = $${params.length + 1}`,
      [...params, query.startingAfter],
    );
    if (!cursor) return null;
    params.push(cursor.created_at, cursor.id);
    after = `AND (created_at, id) < ($${params.length - 1}, $${params.length})`;
  }
  params.push(query.limit + 1);
  const rows = await db.rows<Row>(
    `SELECT ${query.columns} FROM ${query.table}
      WHERE ${query.where} ${after}
      ORDER BY created_at DESC, id DESC
      LIMIT $${params.length}`,
    params,
  );
  return { rows: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
}
