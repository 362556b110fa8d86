import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const ROOT = join(__dirname, '..', '..');
const run = async (file: string, args: string[]) =>
  (await promisify(execFile)(file, args, { cwd: ROOT })).stdout.trim();

// Loads the package as a merchant's project would, in a fresh Node process, and reports
// what it exports and whether the verifier (a CommonJS dependency) works from there.
const PROBE = `
  const kuko = new KukoPay('kuko_test_x', { baseUrl: 'http://127.0.0.1:1' });
  let verified;
  try { KukoPay.notifications.verify('{}', {}, 'whsec_AAAA'); } catch (error) { verified = error.name; }
  console.log(JSON.stringify({
    same: KukoPay === named, resources: Object.keys(kuko).sort(), verified, errors: typeof KukoPayConnectionError,
  }));`;
const EXPECTED = {
  same: true,
  resources: ['account', 'events', 'orders', 'refunds', 'testHelpers'],
  verified: 'KukoPaySignatureVerificationError',
  errors: 'function',
};

/** The built package as published: both module systems, and only what belongs in the tarball. */
describe('the @kukopay/node package', () => {
  it('loads with import (ES modules): KukoPay as default and named export', async () => {
    const code = `import KukoPay, { KukoPay as named, KukoPayConnectionError } from '@kukopay/node';${PROBE}`;
    expect(JSON.parse(await run(process.execPath, ['--input-type=module', '-e', code]))).toEqual(EXPECTED);
  });

  it('loads with require (CommonJS)', async () => {
    const code = `const {
      default: KukoPay,
      KukoPay: named,
      KukoPayConnectionError,
    } = require('@kukopay/node');${PROBE}`;
    expect(JSON.parse(await run(process.execPath, ['-e', code]))).toEqual(EXPECTED);
  });

  it('packs its two builds, their declarations and the README, and nothing else', async () => {
    const npm = process.env.npm_execpath;
    const [file, args] = npm ? [process.execPath, [npm]] : ['npm', []];
    // --ignore-scripts: the package's prepack rebuilds it, deleting sdk/dist first, under the
    // suites running beside this one that load the client from there.
    const packArgs = ['pack', '--dry-run', '--json', '--ignore-scripts', '-w', 'sdk'];
    const [pack] = JSON.parse(await run(file, [...args, ...packArgs]));
    const paths: string[] = pack.files.map((f: { path: string }) => f.path);
    expect(paths.filter((p) => !/^dist\/(esm|cjs)\//.test(p)).sort()).toEqual(['README.md', 'package.json']);
    for (const dir of ['esm', 'cjs']) {
      expect(paths).toEqual(
        expect.arrayContaining([`dist/${dir}/index.js`, `dist/${dir}/index.d.ts`, `dist/${dir}/package.json`]),
      );
    }
    expect(paths.some((p) => /test|spec|scripts\//.test(p))).toBe(false);
  });
});
