import type { OpenAPIObject } from '@nestjs/swagger';

const ADMIN_PATH_PREFIX = '/v1/admin/';
const SCHEMA_REF_PREFIX = '#/components/schemas/';

/**
 * The document as a deployment without ADMIN_TOKEN serves it: the admin API answers there
 * like an unknown route (docs/errors.md), so its paths, tag, security scheme and the
 * schemas only they use are left out too; the document would otherwise say it exists.
 */
export function withoutAdminApi(document: OpenAPIObject): OpenAPIObject {
  const kept = Object.entries(document.paths).filter(([path]) => !path.startsWith(ADMIN_PATH_PREFIX));
  const paths = Object.fromEntries(kept);
  const { admin: _admin, ...securitySchemes } = document.components?.securitySchemes ?? {};
  const pruned: OpenAPIObject = {
    ...document,
    paths,
    tags: document.tags?.filter((tag) => tag.name !== 'admin'),
    components: { ...document.components, securitySchemes },
  };
  const { schemas = {}, ...otherComponents } = pruned.components!;
  const used = schemasReachedFrom([pruned.paths, pruned.webhooks, otherComponents], schemas);
  pruned.components!.schemas = Object.fromEntries(Object.entries(schemas).filter(([name]) => used.has(name)));
  return pruned;
}

/** The names of the schemas `roots` refer to, and those they refer to in turn. */
function schemasReachedFrom(roots: unknown[], schemas: Record<string, unknown>): Set<string> {
  const reached = new Set<string>();
  const pending = [...roots];
  while (pending.length > 0) {
    const node = pending.pop();
    if (typeof node !== 'object' || node === null) continue;
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && value.startsWith(SCHEMA_REF_PREFIX)) {
        const name = value.slice(SCHEMA_REF_PREFIX.length);
        if (!reached.has(name)) {
          reached.add(name);
          pending.push(schemas[name]);
        }
      } else {
        pending.push(value);
      }
    }
  }
  return reached;
}
