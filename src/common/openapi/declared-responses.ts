import { DECORATORS, getSchemaPath } from '@nestjs/swagger';
import type { HeaderObject, ReferenceObject, SchemaObject } from '@nestjs/swagger';
import { ERROR_CATALOG, ErrorCode } from '../errors/error-catalog';
import { errorExample } from './error-examples';
import { ErrorSchema } from './error.schema';
import { IDEMPOTENT_REPLAYED, RETRY_AFTER } from './headers';

/**
 * What the response decorators (ApiErrors, ApiSuccess, Idempotent, ApiStandardErrors)
 * have declared for one route handler. Every decorator adds to this record and then
 * re-renders all of the handler's responses from it, so the result does not depend on
 * the order the decorators are written in, and two decorators that name codes of the
 * same status produce one response listing all of them.
 */
export interface DeclaredResponses {
  idempotent: boolean;
  success: Map<number, SuccessResponse>;
  errors: Map<number, Set<ErrorCode>>;
}

export interface SuccessResponse {
  description: string;
  schema: SchemaObject | ReferenceObject;
  headers?: Record<string, HeaderObject>;
  example?: unknown;
}

const DECLARED = 'kukopay:openapi:declared-responses';

/** Statuses an Idempotency-Key never stores, so never replays (docs/idempotency.md). */
const NOT_STORED = new Set([401, 408, 409, 413, 415, 429, 431]);
/** Codes whose answers always carry Retry-After. */
const ALWAYS_RETRY_AFTER = new Set<string>([
  'idempotency_in_progress',
  'service_unavailable',
  'resource_not_ready',
  'rate_limited',
  'webhooks_not_configured',
]);

export function declare(handler: object, change: (declared: DeclaredResponses) => void): void {
  const declared: DeclaredResponses = Reflect.getOwnMetadata(DECLARED, handler) ?? {
    idempotent: false,
    success: new Map(),
    errors: new Map(),
  };
  change(declared);
  Reflect.defineMetadata(DECLARED, declared, handler);
  const responses: Record<string, unknown> = { ...(Reflect.getOwnMetadata(DECORATORS.API_RESPONSE, handler) ?? {}) };
  for (const [status, success] of declared.success) responses[status] = renderSuccess(status, success, declared);
  for (const [status, codes] of declared.errors) responses[status] = renderErrors(status, [...codes], declared);
  Reflect.defineMetadata(DECORATORS.API_RESPONSE, responses, handler);
}

export function addErrorCodes(declared: DeclaredResponses, codes: readonly ErrorCode[]): void {
  for (const code of codes) {
    const { status } = ERROR_CATALOG[code];
    const set = declared.errors.get(status) ?? new Set<ErrorCode>();
    set.add(code);
    declared.errors.set(status, set);
  }
}

function replayHeader(status: number, declared: DeclaredResponses): Record<string, HeaderObject> {
  return declared.idempotent && status < 500 && !NOT_STORED.has(status)
    ? { 'Idempotent-Replayed': IDEMPOTENT_REPLAYED }
    : {};
}

function renderSuccess(status: number, success: SuccessResponse, declared: DeclaredResponses) {
  return {
    description: success.description,
    schema: success.schema,
    headers: { ...success.headers, ...replayHeader(status, declared) },
    ...(success.example === undefined ? {} : { example: success.example }),
  };
}

function renderErrors(status: number, codes: ErrorCode[], declared: DeclaredResponses) {
  codes.sort();
  const types = [...new Set(codes.map((code) => ERROR_CATALOG[code].type))].sort();
  const headers: Record<string, HeaderObject> = { ...replayHeader(status, declared) };
  if (codes.some((code) => ALWAYS_RETRY_AFTER.has(code))) {
    headers['Retry-After'] = { ...RETRY_AFTER, required: codes.every((code) => ALWAYS_RETRY_AFTER.has(code)) };
  }
  return {
    description: codes.map((code) => `\`${code}\``).join(', '),
    schema: {
      allOf: [
        { $ref: getSchemaPath(ErrorSchema) },
        {
          type: 'object',
          properties: {
            code: { type: 'integer', enum: [status] },
            error: { type: 'string', enum: codes },
            type: { type: 'string', enum: types },
          },
        },
      ],
    },
    headers,
    examples: Object.fromEntries(codes.map((code) => [code, { summary: code, value: errorExample(code) }])),
  };
}
