import type { HeaderObject } from '@nestjs/swagger';

/** Response headers as the OpenAPI document declares them. Values are strings on the wire. */
export const REQUEST_ID_PATTERN = '^req_[0-9a-f]{32}$';

export const X_REQUEST_ID: HeaderObject = {
  description: 'The id of this request (the original one on a replay); the JSON body carries the same value.',
  required: true,
  schema: { type: 'string', pattern: REQUEST_ID_PATTERN, example: 'req_5f0c6e2b8d9a4c1e9b7a3d2f1e0c4b6a' },
};

export const IDEMPOTENT_REPLAYED: HeaderObject = {
  description: 'Present on an answer replayed from the Idempotency-Key store: nothing executed again.',
  required: false,
  schema: { type: 'string', enum: ['true'] },
};

export const RETRY_AFTER: HeaderObject = {
  description: 'Seconds to wait before retrying (with the same Idempotency-Key).',
  required: false,
  schema: { type: 'string', pattern: '^[0-9]+$', example: '1' },
};

export const location = (example: string): HeaderObject => ({
  description: 'The path of the object created.',
  required: true,
  schema: { type: 'string', example },
});
