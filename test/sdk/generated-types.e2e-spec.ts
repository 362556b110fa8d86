import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const ROOT = join(__dirname, '..', '..');
const EXPORT = join(ROOT, 'dist', 'export-openapi.cli.js');
const GENERATE = join(ROOT, 'sdk', 'scripts', 'generate-types.mjs');
const COMMITTED = join(ROOT, 'sdk', 'src', 'generated', 'openapi.ts');

async function node(...args: string[]): Promise<{ code: number; output: string }> {
  return promisify(execFile)(process.execPath, args, { cwd: ROOT }).then(
    ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({
      code: error.code,
      output: error.stdout + error.stderr,
    }),
  );
}

/**
 * The client's types (sdk/src/types.ts) are aliases of sdk/src/generated/openapi.ts: that
 * committed file must be what the generator makes of the document the server exports now
 * (the same two steps as `npm run sdk:types`, the build being `npm test`'s own), so an API
 * change that was not regenerated fails here instead of reaching merchants as wrong types.
 */
describe('the committed client types', () => {
  const dir = join(ROOT, '.data', `generated-types-${process.pid}`);
  const documentFile = join(dir, 'openapi.json');

  beforeAll(async () => {
    mkdirSync(dir, { recursive: true });
    expect(await node(EXPORT, documentFile)).toMatchObject({ code: 0 });
  }, 60000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('are the types generated from the exported OpenAPI document (else: npm run sdk:types)', async () => {
    expect(await node(GENERATE, documentFile, '--check')).toEqual({
      code: 0,
      output: `${COMMITTED} matches the document\n`,
    });
  }, 60000);

  it('are reported stale when the document changes', async () => {
    const document = JSON.parse(readFileSync(documentFile, 'utf8'));
    document.components.schemas.Order.properties.drift_probe = { type: 'string' };
    const changed = join(dir, 'changed.json');
    writeFileSync(changed, JSON.stringify(document));

    const result = await node(GENERATE, changed, '--check');
    expect(result.code).toBe(1);
    expect(result.output).toContain('differs from the document: run npm run sdk:types');
  }, 60000);

  it('are where the client takes its resource types from', () => {
    const types = readFileSync(join(ROOT, 'sdk', 'src', 'types.ts'), 'utf8');
    expect(types).toContain("from './generated/openapi.ts'");
    const schemas = ['Order', 'Refund', 'Account', 'Error', 'CreateOrderDto', 'CreateRefundDto', 'Event'];
    for (const schema of [...schemas, 'EventDelivery', 'EventWithDelivery', 'EventAttempt']) {
      expect(types).toContain(`Schemas['${schema}']`);
    }
  });
});
