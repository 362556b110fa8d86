import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule, AppModuleOptions } from './app.module';
import { ADMIN_ROUTE_PREFIX } from './common/auth/admin.guard';
import { ApiExceptionFilter } from './common/errors/api-exception.filter';
import { EnvelopeInterceptor } from './common/http/envelope.interceptor';
import { setUpOpenApi } from './common/openapi/openapi-document';
import { KukoFastifyAdapter } from './common/http/kuko-fastify-adapter';
import { createValidationPipe } from './common/http/validation.pipe';
import { IdempotencyInterceptor } from './idempotency/idempotency.interceptor';
import { createRootLogger, NestPinoLogger } from './common/logging/logger';
import { logRequests } from './common/logging/request-logging';
import { installMetrics } from './metrics/install-metrics';

/**
 * Builds the whole application, initialised but not listening. `npm start` and the e2e
 * tests use this same function, so the tests exercise exactly what runs in production.
 */
export async function createApp(options: AppModuleOptions): Promise<NestFastifyApplication> {
  const logger = createRootLogger(options.config.logLevel, options.config.logFormat);
  const adapter = new KukoFastifyAdapter({
    requestTimeoutMs: options.config.requestTimeoutMs,
    absentRoutePrefixes: options.config.adminToken ? [] : [ADMIN_ROUTE_PREFIX],
  });
  const { adminToken, metricsToken } = options.config;
  logRequests(
    adapter.getInstance(),
    adapter.connections,
    logger,
    [adminToken, metricsToken].filter((token) => token !== null),
  );
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(options), adapter, {
    logger: new NestPinoLogger(logger),
    // KukoFastifyAdapter has the one JSON parser (raw bytes kept for webhooks).
    bodyParser: false,
    abortOnError: false,
  });
  app.useGlobalFilters(new ApiExceptionFilter());
  app.useGlobalPipes(createValidationPipe());
  // Idempotency outside the envelope: it stores and replays the complete answer.
  app.useGlobalInterceptors(app.get(IdempotencyInterceptor), new EnvelopeInterceptor());
  installMetrics(app, options.config, adapter.connections);
  setUpOpenApi(app, { adminApi: options.config.adminToken !== null });
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  return app;
}
