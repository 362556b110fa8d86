import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { AuthFailureLimiter } from '../common/auth/auth-failure-limiter';
import type { AppConfig } from '../config/app-config';
import { Metrics } from '../common/metrics/metrics';
import { countRequests, serveMetrics } from './metrics-http';

/** The request hook and GET /metrics, on Fastify itself: no Nest pipeline per scrape. */
export function installMetrics(app: NestFastifyApplication, config: AppConfig): void {
  const fastify = app.getHttpAdapter().getInstance();
  const metrics = app.get(Metrics);
  countRequests(fastify, metrics, new Set(config.webhookSecrets.keys()));
  serveMetrics(fastify, metrics, config.metricsToken, app.get(AuthFailureLimiter));
}
