import type { SchemaObject } from '@nestjs/swagger';

const RULES = new Map<string, SchemaObject>();

/**
 * Keywords a class's schema needs beyond its properties, for rules class-validator checks
 * in the service (e.g. "exactly one of order_id / out_trade_no"). Merged into the
 * component schema named after the class by finalizeDocument.
 */
export function ApiSchemaRules(rules: SchemaObject): ClassDecorator {
  return (target) => {
    RULES.set(target.name, rules);
  };
}

export function schemaRules(): ReadonlyMap<string, SchemaObject> {
  return RULES;
}
