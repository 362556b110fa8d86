import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { Db } from '../database/db';
import { notFound } from './errors/domain-error';
import { Page } from './http/api-response';

/** `limit` and `starting_after` of every list endpoint. */
export class PageQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, default: 10 })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'limit must be an integer from 1 to 100' })
  @Min(1, { message: 'limit must be an integer from 1 to 100' })
  @Max(100, { message: 'limit must be an integer from 1 to 100' })
  limit?: number;

  @ApiPropertyOptional({ description: 'The last id of the previous page: list the objects created before it' })
  @IsOptional()
  @IsString()
  starting_after?: string;
}

export interface KeysetQuery<Row, T> {
  /** Table and the columns to select. */
  table: string;
  columns: string;
  /** Filter over $1 … $n, e.g. `merchant_id = $1 AND environment = $2`. */
  where: string;
  params: unknown[];
  page: PageQuery;
  /** Name of the object, for the 404 of an unknown cursor. */
  object: string;
  map: (row: Row) => T;
}

/**
 * Newest first by (created_at, id), the cursor being the last id of the previous page.
 * The cursor must itself match the filter, so it cannot reveal other merchants' data.
 */
export async function keysetPage<Row, T>(db: Db, query: KeysetQuery<Row, T>): Promise<Page<T>> {
  const limit = query.page.limit ?? 10;
  const params = [...query.params];
  let after = '';
  if (query.page.starting_after !== undefined) {
    const cursor = await db.one<{ created_at: Date; id: string }>(
      `SELECT created_at, id FROM ${query.table} WHERE ${query.where} AND id = $${params.length + 1}`,
      [...params, query.page.starting_after],
    );
    if (!cursor) throw notFound(query.object, query.page.starting_after, 'starting_after');
    params.push(cursor.created_at, cursor.id);
    after = `AND (created_at, id) < ($${params.length - 1}, $${params.length})`;
  }
  params.push(limit + 1);
  const rows = await db.rows<Row>(
    `SELECT ${query.columns} FROM ${query.table}
      WHERE ${query.where} ${after}
      ORDER BY created_at DESC, id DESC
      LIMIT $${params.length}`,
    params,
  );
  return new Page(rows.slice(0, limit).map(query.map), rows.length > limit);
}
