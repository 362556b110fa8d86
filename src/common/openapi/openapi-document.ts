import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { ErrorSchema } from './error.schema';
import { finalizeDocument } from './finalize-document';
import { withoutAdminApi } from './without-admin-api';

/**
 * Serves the document at /docs-json and the interactive reference at /docs; without
 * `adminApi` (no ADMIN_TOKEN), as if the admin API did not exist.
 */
export function setUpOpenApi(app: INestApplication, { adminApi }: { adminApi: boolean }): void {
  const document = buildOpenApiDocument(app);
  SwaggerModule.setup('docs', app, adminApi ? document : withoutAdminApi(document), {
    jsonDocumentUrl: 'docs-json',
    // /docs#/orders/createOrder opens that operation.
    swaggerOptions: { deepLinking: true, displayOperationId: true },
  });
}

/**
 * The OpenAPI 3.1 document of the running application, built from the controllers' and
 * DTOs' decorators (docs/decisions.md, "The OpenAPI document"). Served at /docs-json and
 * exported to a file by `npm run openapi:export`.
 */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setOpenAPIVersion('3.1.0')
    .setTitle('KukoPay-compatible payments API')
    .setDescription(
      'Orders and refunds whose every write can be retried safely. Every answer carries X-Request-Id; ' +
        'every error is one `Error` object. See docs/ in the repository.',
    )
    .setVersion('1')
    .setLicense('Proprietary (UNLICENSED)', 'https://spdx.org/licenses/')
    .addServer('/', 'The server that serves this document')
    .addApiKey(
      { type: 'apiKey', name: 'X-Api-Key', in: 'header', description: 'kuko_test_… or kuko_live_…' },
      'api-key',
    )
    // bearerFormat: undefined drops the builder's default 'JWT': ADMIN_TOKEN is an opaque secret.
    .addBearerAuth(
      { type: 'http', scheme: 'bearer', bearerFormat: undefined, description: 'ADMIN_TOKEN of the deployment' },
      'admin',
    )
    .addTag('orders', 'Create, find, list and close orders')
    .addTag('refunds', 'Partial or full refunds of paid orders')
    .addTag('events', 'Merchant notifications sent to notify_url, and their delivery')
    .addTag('account', 'Who an API key belongs to')
    .addTag('admin', 'Merchants (ADMIN_TOKEN)')
    .addTag('webhooks', "The payment provider's signed events")
    .addTag('health', 'Liveness and readiness')
    .addTag('test_helpers', 'Sandbox: settle orders and refunds as the provider would (test keys only)')
    .addTag('notifications', 'What your notify_url receives (the webhooks of this document)')
    .build();
  const document = SwaggerModule.createDocument(app, config, {
    extraModels: [ErrorSchema],
  });
  return finalizeDocument(document);
}
