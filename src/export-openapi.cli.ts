/**
 * `npm run openapi:export -- [file]`: writes the OpenAPI document (default openapi.json)
 * without a database: the application is created in Nest's preview mode, which reads
 * the decorators but instantiates no provider.
 */
import 'reflect-metadata';
import { existsSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { loadConfig } from './config/app-config';
import { readCommandLine } from './config/command-line';
import { KukoFastifyAdapter } from './common/http/kuko-fastify-adapter';
import { buildOpenApiDocument } from './common/openapi/openapi-document';

const USAGE = `
Usage: npm run openapi:export -- [file]   (or node dist/export-openapi.cli.js [file])

Writes the OpenAPI 3.1 document to file (default openapi.json), replacing it, without
starting a database. Reads no environment variable: the document is that of the defaults.
`;

async function main(): Promise<void> {
  const { positionals } = readCommandLine({ name: 'openapi:export', usage: USAGE, positionals: 1 });
  const file = positionals[0] ?? 'openapi.json';
  // Before the application is built: a mistyped path is said at once, in one line.
  if (!existsSync(dirname(file))) fail(`cannot write ${file}: its directory ${dirname(file)} does not exist`);
  const config = loadConfig({});
  const module = AppModule.forRoot({ config, databaseUrl: 'postgres://preview.invalid/none' });
  const adapter = new KukoFastifyAdapter({ requestTimeoutMs: config.requestTimeoutMs });
  const app = await NestFactory.create(module, adapter, { preview: true, logger: false });
  const document = `${JSON.stringify(buildOpenApiDocument(app), null, 2)}\n`;
  await app.close();
  try {
    writeFileSync(file, document);
  } catch (error) {
    // EACCES, EISDIR…: the path is the user's to fix, a stack would not help.
    fail(`cannot write ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  process.stdout.write(`wrote ${file}\n`);
}

function fail(what: string): never {
  process.stderr.write(`openapi:export: ${what}\n`);
  process.exit(1);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
