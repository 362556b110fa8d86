import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * The structure docs/decisions.md describes, checked so it cannot drift: layers point one
 * way (features above common/, common/ above database/ and config/, all above domain/), no two features
 * import each other, and SQL lives in repositories, migrations and the database module.
 */
const SRC = join(__dirname, '..', 'src');
/** What each lower layer may import; every other folder is a feature above them all. */
const LOWER_LAYERS: Record<string, string[]> = {
  domain: [],
  config: ['domain'],
  database: ['domain', 'config'],
  common: ['domain', 'config', 'database'],
};
const isLower = (name: string) => name in LOWER_LAYERS;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** Top folder under src/ of a file (or the file name for main.ts and friends). */
const area = (path: string) => relative(SRC, path).split('/')[0];

function imports(): [from: string, to: string][] {
  return sourceFiles(SRC).flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(/from '(\.[^']+)'/g)].map(
      ([, target]) => [area(file), area(resolve(dirname(file), target))] as [string, string],
    ),
  );
}

describe('the structure of src/', () => {
  const edges = imports().filter(([from, to]) => from !== to);

  it('has no import from a lower layer up to a feature or a higher layer', () => {
    const upward = edges.filter(([from, to]) => isLower(from) && !LOWER_LAYERS[from].includes(to));
    expect(upward).toEqual([]);
  });

  it('has no two features importing each other', () => {
    const features = edges.filter(([from, to]) => !isLower(from) && !isLower(to));
    const pairs = new Set(features.map(([from, to]) => `${from}>${to}`));
    expect(features.filter(([from, to]) => pairs.has(`${to}>${from}`))).toEqual([]);
  });

  it('has every write take a body DTO or refuse one (@TakesNoBody), so no field is silently ignored', () => {
    const writes = sourceFiles(SRC)
      .filter((file) => file.endsWith('.controller.ts'))
      .flatMap((file) =>
        readFileSync(file, 'utf8')
          .split(/(?=@(?:Post|Get|Put|Patch|Delete)\()/)
          .filter((route) => route.startsWith('@Post('))
          .map((route) => ({ file: relative(SRC, file), route })),
      );
    expect(writes.length).toBeGreaterThan(10);
    // The webhook route reads its raw body itself, after checking the signature over it.
    const unchecked = writes
      .filter(({ route }) => !/@Body\(\)|@TakesNoBody\(\)|@Req\(\) request: FastifyRequest/.test(route))
      .map(({ file, route }) => `${file}: ${route.slice(0, route.indexOf('\n'))}`);
    expect(unchecked).toEqual([]);
  });

  // class-validator's IsOptional takes null for absent: in a body, null must be refused
  // (docs/errors.md), which Optional() does. Query strings cannot carry null.
  it('has body DTOs mark optional fields with Optional(), never IsOptional', () => {
    const bodies = sourceFiles(SRC).filter((file) => file.endsWith('.dto.ts'));
    expect(bodies.length).toBeGreaterThanOrEqual(4);
    const lenient = bodies.filter((file) => /\bIsOptional\b/.test(readFileSync(file, 'utf8')));
    expect(lenient.map((file) => relative(SRC, file))).toEqual([]);
  });

  it('keeps SQL in repositories and the database module', () => {
    const sql = /\b(SELECT|INSERT|UPDATE|DELETE)\b/;
    const misplaced = sourceFiles(SRC)
      .filter((file) => !file.endsWith('.repository.ts') && area(file) !== 'database')
      .filter((file) => sql.test(readFileSync(file, 'utf8')))
      .map((file) => relative(SRC, file));
    expect(misplaced).toEqual([]);
  });
});
