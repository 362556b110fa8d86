import type { OpenAPIObject, ParameterObject, ReferenceObject, SchemaObject } from '@nestjs/swagger';

/**
 * JSON Schema counts `2990.0` and `2.99e3` as integers; the server refuses them
 * (docs/errors.md, "Numbers are integers as written"), and no keyword of the schema can
 * say so. So every integer a request carries, in a body or a query, says it in words, so
 * that a validating proxy's author, or a generated client's reader, is not surprised.
 */
export const INTEGERS_AS_WRITTEN =
  'Written as digits only: with a decimal point or an exponent (10.0, 1e1) it is refused (400 parameter_invalid), though JSON Schema counts such a number as an integer.';

export function describeIntegersAsWritten(document: OpenAPIObject): void {
  const schemas = document.components?.schemas ?? {};
  const visited = new Set<object>();
  const visit = (schema: SchemaObject | ReferenceObject | undefined): void => {
    if (typeof schema !== 'object' || schema === null || visited.has(schema)) return;
    visited.add(schema);
    if ('$ref' in schema) {
      visit(schemas[schema.$ref.replace('#/components/schemas/', '')]);
      return;
    }
    const types = ([] as unknown[]).concat(schema.type ?? []);
    if (types.includes('integer') && !schema.description?.includes(INTEGERS_AS_WRITTEN)) {
      schema.description = schema.description ? `${schema.description}. ${INTEGERS_AS_WRITTEN}` : INTEGERS_AS_WRITTEN;
    }
    // Properties, items, oneOf and the rest alike (an example holds no `type`).
    for (const value of Object.values(schema)) {
      if (Array.isArray(value)) value.forEach((item) => visit(item as SchemaObject));
      else if (typeof value === 'object' && value !== null) visit(value as SchemaObject);
    }
  };
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item)) {
      if (typeof operation !== 'object' || operation === null || !('responses' in operation)) continue;
      const body = operation.requestBody as { content?: Record<string, { schema?: SchemaObject }> } | undefined;
      for (const media of Object.values(body?.content ?? {})) visit(media.schema);
      for (const parameter of (operation.parameters ?? []) as ParameterObject[]) visit(parameter.schema);
    }
  }
}
