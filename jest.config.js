// Jest in CommonJS mode on Node 20. Nest 12 and a few other packages are ESM-only and are
// require()d by CommonJS libraries; Jest's loader cannot do that on Node 20, so those
// packages are compiled to CommonJS by SWC along with our TypeScript.
const { readdirSync, readFileSync, existsSync } = require('node:fs');
const { join } = require('node:path');

function esmPackages(root = join(__dirname, 'node_modules')) {
  const names = [];
  for (const entry of readdirSync(root)) {
    if (entry.startsWith('.')) continue;
    const scoped = entry.startsWith('@');
    const packages = scoped ? readdirSync(join(root, entry)).map((name) => `${entry}/${name}`) : [entry];
    for (const name of packages) {
      const manifest = join(root, name, 'package.json');
      if (existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).type === 'module') names.push(name);
    }
  }
  return names;
}

const escape = (name) => name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const swc = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
    target: 'es2022',
  },
  module: { type: 'commonjs' },
  sourceMaps: 'inline',
};

module.exports = {
  testEnvironment: 'node',
  rootDir: __dirname,
  roots: ['<rootDir>/src', '<rootDir>/test', '<rootDir>/sdk/test'],
  testMatch: ['**/*.spec.ts', '**/*.e2e-spec.ts'],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'cjs', 'json'],
  transform: { '^.+\\.(t|j|mj)s$': ['@swc/jest', swc] },
  transformIgnorePatterns: [`/node_modules/(?!(${esmPackages().map(escape).join('|')})/)`],
  globalSetup: '<rootDir>/test/support/global-setup.mjs',
  globalTeardown: '<rootDir>/test/support/global-teardown.mjs',
  testTimeout: 60000,
  maxWorkers: 2,
};
