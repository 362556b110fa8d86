import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const ROOT = join(__dirname, '..', '..');

/** The ```ts blocks of a markdown text, joined into one module. */
function typescriptBlocks(markdown: string): string {
  return [...markdown.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]).join('\n');
}

function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`no "## ${heading}" section`);
  const end = markdown.indexOf('\n## ', start + 1);
  return markdown.slice(start, end < 0 ? undefined : end);
}

const EXAMPLES = {
  'use-it-from-node.mts': typescriptBlocks(section(readFileSync(join(ROOT, 'README.md'), 'utf8'), 'Use it from Node')),
  'sdk-readme.mts': typescriptBlocks(readFileSync(join(ROOT, 'sdk', 'README.md'), 'utf8')),
};

/**
 * The README examples are what merchants copy: they must compile under `tsc --strict`
 * against the built package (as a merchant's project resolves it), with no cast.
 */
describe('the README examples of @kukopay/node', () => {
  it.each(Object.entries(EXAMPLES))('%s uses the client and contains no cast', (_name, example) => {
    expect(example).toMatch(/new KukoPay\(/);
    const code = example.replace(/\/\/.*$/gm, '');
    expect(code.match(/\bas\s+(?!const\b)\w/g)).toBeNull();
    expect(code.match(/[\w)\]]!(?=[.[;,)\s])/g)).toBeNull();
    expect(code).not.toMatch(/\bany\b|@ts-/);
  });

  it('compile under tsc --strict against the built package', async () => {
    const dir = join(ROOT, '.data', `readme-types-${process.pid}`);
    mkdirSync(dir, { recursive: true });
    try {
      for (const [name, code] of Object.entries(EXAMPLES)) writeFileSync(join(dir, name), code);
      const compilerOptions = {
        strict: true,
        noEmit: true,
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2022',
        lib: ['es2023'],
        types: ['node'],
      };
      writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: Object.keys(EXAMPLES) }));
      const args = [require.resolve('typescript/bin/tsc'), '-p', dir];
      const result = await promisify(execFile)(process.execPath, args, { cwd: dir }).then(
        () => '',
        (error: { stdout?: string; message: string }) => error.stdout || error.message,
      );
      expect(result).toBe('');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60000);
});
