import type { OpenAPIObject, OperationObject, ReferenceObject, ResponseObject, SchemaObject } from '@nestjs/swagger';
import { X_REQUEST_ID } from './headers';
import { describeIntegersAsWritten } from './integers-as-written';
import { addNotificationWebhooks } from './notification-webhooks';
import { schemaRules } from './schema-rules';

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;

/**
 * The steps over the generated document for what is true of every operation, or what
 * @nestjs/swagger cannot say (docs/decisions.md, "The OpenAPI document"):
 * - X-Request-Id on every response (the Fastify adapter sets it on every answer);
 * - request body schemas forbid unknown fields (the global ValidationPipe refuses them);
 * - class-level schema rules (ApiSchemaRules) merged into their component schemas;
 * - `nullable: true` (OpenAPI 3.0, what the generator writes) turned into 3.1 types;
 * - routes marked public get `security: []`;
 * - every integer of a request says that it is written as digits only;
 * - merchant notification events under `webhooks`.
 */
export function finalizeDocument(document: OpenAPIObject): OpenAPIObject {
  const schemas = (document.components ??= {}).schemas ?? {};
  document.components.headers = { ...document.components.headers, 'X-Request-Id': X_REQUEST_ID };
  for (const operation of operations(document)) {
    if (operation['x-kuko-public']) {
      operation.security = [];
      delete operation['x-kuko-public'];
    }
    for (const response of Object.values(operation.responses ?? {}) as ResponseObject[]) {
      response.headers = { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' }, ...response.headers };
    }
    const body = operation.requestBody as { content?: Record<string, { schema?: SchemaObject | ReferenceObject }> };
    for (const media of Object.values(body?.content ?? {})) {
      const name = refName(media.schema);
      if (name && schemas[name]) (schemas[name] as SchemaObject).additionalProperties = false;
    }
    for (const parameter of operation.parameters ?? []) {
      if ('schema' in parameter && parameter.schema) toOpenApi31(parameter.schema);
    }
  }
  for (const [name, rules] of schemaRules()) {
    if (schemas[name]) Object.assign(schemas[name], rules);
  }
  for (const schema of Object.values(schemas)) toOpenApi31(schema);
  describeIntegersAsWritten(document);
  addNotificationWebhooks(document);
  return document;
}

function* operations(document: OpenAPIObject): Generator<OperationObject & Record<string, unknown>> {
  for (const item of Object.values(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (operation) yield operation as OperationObject & Record<string, unknown>;
    }
  }
}

function refName(schema: SchemaObject | ReferenceObject | undefined): string | null {
  const ref = (schema as ReferenceObject | undefined)?.$ref;
  return ref?.startsWith('#/components/schemas/') ? ref.slice('#/components/schemas/'.length) : null;
}

/** `nullable: true` → `type: [t, 'null']` (or a oneOf with null around a $ref/allOf), recursively. */
function toOpenApi31(schema: SchemaObject | ReferenceObject): void {
  if (typeof schema !== 'object' || schema === null || '$ref' in schema) return;
  const node = schema as SchemaObject & Record<string, unknown>;
  if (node.nullable === true) {
    delete node.nullable;
    if (typeof node.type === 'string') {
      node.type = [node.type, 'null'] as unknown as SchemaObject['type'];
      if (Array.isArray(node.enum) && !node.enum.includes(null)) node.enum = [...node.enum, null];
    } else if (node.allOf) {
      node.oneOf = [{ allOf: node.allOf }, { type: 'null' }];
      delete node.allOf;
      delete node.type;
    }
  }
  for (const value of Object.values(node)) {
    if (Array.isArray(value)) value.forEach((item) => typeof item === 'object' && item && toOpenApi31(item));
    else if (typeof value === 'object' && value !== null) toOpenApi31(value as SchemaObject);
  }
}
