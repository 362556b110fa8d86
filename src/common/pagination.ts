import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, Min, MinLength } from 'class-validator';
import { notFound } from './errors/domain-error';
import { Page } from './http/api-response';

export const DEFAULT_PAGE_LIMIT = 10;

/** `limit` and `starting_after` of every list endpoint. */
export class PageQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, default: DEFAULT_PAGE_LIMIT })
  @IsOptional()
  // Only plain decimal digits are a number here, as in bodies: `0x10`, `1e1`, `10.0`
  // and ` 10` are refused instead of read loosely by Number().
  @Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' && /^[0-9]{1,3}$/.test(value) ? Number(value) : value,
  )
  @IsInt({ message: 'limit must be an integer from 1 to 100' })
  @Min(1, { message: 'limit must be an integer from 1 to 100' })
  @Max(100, { message: 'limit must be an integer from 1 to 100' })
  limit?: number;

  @ApiPropertyOptional({
    description: 'The last id of the previous page: list the objects created before it',
    minLength: 1,
  })
  @IsOptional()
  @IsString()
  // Empty (`?starting_after=`) is a client's bug, not an id that names no object.
  @MinLength(1, { message: 'starting_after must not be empty: leave it out, or send the last id of the previous page' })
  starting_after?: string;
}

/**
 * A page of API objects from a repository's keyset rows; null rows mean the cursor named
 * no object of this list (404 on `starting_after`).
 */
export function toPage<Row, T>(
  result: { rows: Row[]; hasMore: boolean } | null,
  map: (row: Row) => T,
  object: string,
  page: PageQuery,
): Page<T> {
  if (!result) throw notFound(object, page.starting_after ?? '', 'starting_after');
  return new Page(result.rows.map(map), result.hasMore);
}
