import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { AuthFailureLimiter } from '../common/auth/auth-failure-limiter';
import type { AppConfig } from '../config/app-config';
import type { Connections } from '../common/http/connections';
import { Metrics } from '../common/metrics/metrics';
import { countRequests, serveMetrics } from './metrics-http';

/** The request hook and GET /metrics, on Fastify itself: no Nest pipeline per scrape. */
export function installMetrics(app: NestFastifyApplication, config: AppConfig, connections: Connections): void {
  const fastify = app.getHttpAdapter().getInstance();
  const metrics = app.get(Metrics);
  countRequests(fastify, metrics, new Set(config.webhookSecrets.keys()));
  // Requests the HTTP parser refused: counted by status, with no route and no duration.
  connections.onRawAnswer(({ method, status }) =>
    metrics.requests.inc({ method: method ?? 'unparsed', route: 'unmatched', status: String(status) }),
  );
  serveMetrics(fastify, metrics, config.metricsToken, app.get(AuthFailureLimiter));
}
