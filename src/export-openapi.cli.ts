/**
 * `npm run openapi:export [file]`: writes the OpenAPI document (default openapi.json)
 * without a database: the application is created in Nest's preview mode, which reads
 * the decorators but instantiates no provider.
 */
import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { loadConfig } from './config/app-config';
import { KukoFastifyAdapter } from './common/http/kuko-fastify-adapter';
import { buildOpenApiDocument } from './common/openapi/openapi-document';

async function main(): Promise<void> {
  const file = process.argv[2] ?? 'openapi.json';
  const config = loadConfig({});
  const module = AppModule.forRoot({ config, databaseUrl: 'postgres://preview.invalid/none' });
  const adapter = new KukoFastifyAdapter({ requestTimeoutMs: config.requestTimeoutMs });
  const app = await NestFactory.create(module, adapter, { preview: true, logger: false });
  writeFileSync(file, `${JSON.stringify(buildOpenApiDocument(app), null, 2)}\n`);
  await app.close();
  process.stdout.write(`wrote ${file}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
