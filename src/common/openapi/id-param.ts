import { ApiParam } from '@nestjs/swagger';
import type { IdPrefix } from '../ids';

/** The form of an id newId(prefix) makes (isIdOf): the prefix, `_`, 32 lower-case hex digits. */
export function idPattern(prefix: IdPrefix): string {
  return `^${prefix}_[0-9a-f]{32}$`;
}

const OBJECTS = { ord: 'order', rf: 'refund', evt: 'event', mch: 'merchant' } as const;

/**
 * A path's `{id}`, described with its object's id form. Without it the document let `.`
 * and `..` through as ids, which URL libraries fold into another route before sending
 * (`GET /v1/orders/.` lists the orders). An id of another form is never found: 404.
 */
export function ApiIdParam(prefix: keyof typeof OBJECTS): MethodDecorator {
  return ApiParam({
    name: 'id',
    description: `The ${OBJECTS[prefix]}'s id (\`${prefix}_…\`)`,
    schema: { type: 'string', pattern: idPattern(prefix) },
  });
}
