#!/usr/bin/env node
/**
 * Generates src/generated/openapi.ts from the server's OpenAPI document with
 * openapi-typescript, so the client's types follow the document (src/types.ts re-exports
 * them). The output depends only on the document: no date, no path, so a test can tell
 * when the committed file has drifted (test/sdk/generated-types.e2e-spec.ts does).
 * `npm run sdk:types` at the repository root exports the document and runs this script.
 *
 *   node scripts/generate-types.mjs <openapi.json>             write the types
 *   node scripts/generate-types.mjs --url <server>/docs-json   read the document from a server
 *   ... --out <file>    write elsewhere          ... --check   only compare; exit 1 when different
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';

const DEFAULT_OUT = join(dirname(fileURLToPath(import.meta.url)), '..', 'src', 'generated', 'openapi.ts');
const HEADER =
  `${COMMENT_HEADER}// From the server's OpenAPI document (GET /docs-json): regenerate with ` +
  '`npm run sdk:types` at the repository root\n\n';

function parseArguments(argv) {
  const options = { source: undefined, url: undefined, out: DEFAULT_OUT, check: false };
  for (let i = 0; i < argv.length; i++) {
    const argument = argv[i];
    if (argument === '--check') options.check = true;
    else if (argument === '--url') options.url = argv[++i];
    else if (argument === '--out') options.out = resolve(argv[++i] ?? '');
    else if (!argument.startsWith('--') && options.source === undefined) options.source = resolve(argument);
    else throw new Error(`unexpected argument ${argument}`);
  }
  if ((options.source === undefined) === (options.url === undefined)) {
    throw new Error('usage: generate-types.mjs <openapi.json> | --url <url> [--out <file>] [--check]');
  }
  return options;
}

async function readDocument({ source, url }) {
  if (source !== undefined) return JSON.parse(readFileSync(source, 'utf8'));
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  return response.json();
}

async function main() {
  const options = parseArguments(process.argv.slice(2));
  const document = await readDocument(options);
  const types = HEADER + astToString(await openapiTS(document, { silent: true }));
  if (options.check) {
    const current = existsSync(options.out) ? readFileSync(options.out, 'utf8') : null;
    if (current !== types) {
      process.stderr.write(`${options.out} differs from the document: run npm run sdk:types\n`);
      process.exit(1);
    }
    process.stdout.write(`${options.out} matches the document\n`);
    return;
  }
  mkdirSync(dirname(options.out), { recursive: true });
  writeFileSync(options.out, types);
  process.stdout.write(`wrote ${options.out}\n`);
}

main().catch((error) => {
  process.stderr.write(`generate-types: ${error.message}\n`);
  process.exit(2);
});
