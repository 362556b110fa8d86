import { applyDecorators, Type } from '@nestjs/common';
import { ApiExtraModels, getSchemaPath } from '@nestjs/swagger';
import type { HeaderObject, SchemaObject } from '@nestjs/swagger';
import { declare, SuccessResponse } from './declared-responses';
import { REQUEST_ID_PATTERN } from './headers';

const REQUEST_ID = { type: 'string', pattern: REQUEST_ID_PATTERN } as const;

/** `{data: <model>, request_id}`: the success envelope around one object. */
export function dataOf(model: Type<unknown>): SchemaObject {
  return {
    type: 'object',
    required: ['data', 'request_id'],
    properties: { data: { $ref: getSchemaPath(model) }, request_id: REQUEST_ID },
  };
}

/** `{data: [<model>], has_more, request_id}`: one page of a list, newest first. */
export function pageOf(model: Type<unknown>): SchemaObject {
  return {
    type: 'object',
    required: ['data', 'has_more', 'request_id'],
    properties: {
      data: { type: 'array', items: { $ref: getSchemaPath(model) } },
      has_more: { type: 'boolean', description: 'Whether older objects follow: pass the last id as starting_after' },
      request_id: REQUEST_ID,
    },
  };
}

/** A success answer with any schema (see dataOf, pageOf); models it refers to must be listed. */
export function ApiSuccess(status: number, response: SuccessResponse, models: Type<unknown>[] = []): MethodDecorator {
  const decorator: MethodDecorator = (_target, _key, descriptor) => {
    declare(descriptor.value as object, (declared) => declared.success.set(status, response));
    return descriptor;
  };
  return applyDecorators(decorator, ApiExtraModels(...models));
}

interface DataOptions {
  description: string;
  headers?: Record<string, HeaderObject>;
  /** The object inside `data`; wrapped in the envelope for the example. */
  example?: unknown;
}

/** A success answer whose `data` is one object of `model`. */
export function ApiData(status: number, model: Type<unknown>, options: DataOptions): MethodDecorator {
  return ApiSuccess(
    status,
    {
      description: options.description,
      schema: dataOf(model),
      headers: options.headers,
      example: options.example === undefined ? undefined : envelopeExample(options.example),
    },
    [model],
  );
}

/** A success answer that is one page of `model`. */
export function ApiPage(model: Type<unknown>, options: DataOptions): MethodDecorator {
  return ApiSuccess(
    200,
    {
      description: options.description,
      schema: pageOf(model),
      example: options.example === undefined ? undefined : { ...envelopeExample([options.example]), has_more: false },
    },
    [model],
  );
}

export function envelopeExample(data: unknown) {
  return { data, request_id: 'req_5f0c6e2b8d9a4c1e9b7a3d2f1e0c4b6a' };
}
