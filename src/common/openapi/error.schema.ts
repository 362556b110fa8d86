import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { ERROR_CATALOG, ErrorType } from '../errors/error-catalog';
import { REQUEST_ID_PATTERN } from './headers';

const ERROR_TYPES: ErrorType[] = [
  'invalid_request_error',
  'idempotency_error',
  'authentication_error',
  'rate_limit_error',
  'api_error',
];

/**
 * The one error object of docs/errors.md. Each operation's responses narrow `error` to
 * the codes that status can carry there (see api-errors.decorator.ts).
 */
@ApiSchema({ name: 'Error', description: 'Every error answer: one object with a machine code and the request id.' })
export class ErrorSchema {
  @ApiProperty({ type: 'integer', description: 'The HTTP status of the answer', example: 404 })
  code!: number;

  @ApiProperty({
    enum: Object.keys(ERROR_CATALOG),
    description: 'Machine code: branch on this',
    example: 'resource_missing',
  })
  error!: string;

  @ApiProperty({
    enum: ERROR_TYPES,
    description: 'Category: tells whether a retry can help',
    example: 'invalid_request_error',
  })
  type!: string;

  @ApiProperty({ description: 'A sentence for humans; may change', example: "No such order: 'ord_0123'" })
  message!: string;

  @ApiProperty({
    type: 'string',
    nullable: true,
    description: 'The field or header at fault, or null',
    example: 'id',
  })
  param!: string | null;

  @ApiProperty({ pattern: REQUEST_ID_PATTERN, example: 'req_5f0c6e2b8d9a4c1e9b7a3d2f1e0c4b6a' })
  request_id!: string;
}
