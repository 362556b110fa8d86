import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Counter, Histogram } from 'prom-client';
import type { AuthFailureLimiter } from '../common/auth/auth-failure-limiter';
import { BearerToken } from '../common/auth/bearer-token';
import { toErrorResponse } from '../common/errors/error-response';
import { headerLines } from '../common/http/header-lines';
import { sendApiResponse } from '../common/http/send';
import type { Metrics } from '../common/metrics/metrics';

const WEBHOOK_ROUTE = '/v1/webhooks/:provider';

interface RouteSeries {
  count: Counter.Internal;
  duration: Histogram.Internal<'method' | 'route' | 'status'>;
}

/**
 * Counts every answered request in one onResponse hook: by route template (never the URL,
 * so ids cannot multiply the series), plus the idempotency and webhook outcomes the
 * request gathered for its log line. The labelled children are cached per method, route
 * and status, so a request costs a map lookup, an increment and a histogram observation.
 */
export function countRequests(fastify: FastifyInstance, metrics: Metrics, webhookProviders: ReadonlySet<string>): void {
  const series = new Map<string, RouteSeries>();
  fastify.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const status = reply.statusCode;
    const key = `${request.method} ${status} ${route}`;
    let found = series.get(key);
    if (!found) {
      const labels = { method: request.method, route, status: String(status) };
      found = { count: metrics.requests.labels(labels), duration: metrics.requestDuration.labels(labels) };
      series.set(key, found);
    }
    found.count.inc();
    found.duration.observe(reply.elapsedTime / 1000);

    const fields = request.logFields;
    if (fields?.idempotency) metrics.idempotency.inc({ outcome: String(fields.idempotency) });
    if (route === WEBHOOK_ROUTE) {
      // Only configured providers: any other name is a 404 and would be unbounded.
      const provider = (request.params as { provider?: string }).provider ?? '';
      if (webhookProviders.has(provider)) {
        metrics.webhookEvents.inc({ provider, outcome: String(fields?.webhook_outcome ?? fields?.error ?? status) });
      }
    }
    done();
  });
}

/**
 * GET /metrics, the Prometheus text format. With METRICS_TOKEN set it asks for
 * `Authorization: Bearer <token>`; failures count towards the address's limit like any
 * other credential.
 */
export function serveMetrics(
  fastify: FastifyInstance,
  metrics: Metrics,
  token: string | null,
  limiter: AuthFailureLimiter,
): void {
  const bearer = token === null ? null : new BearerToken(token, 'metrics token');
  fastify.get('/metrics', async (request: FastifyRequest, reply: FastifyReply) => {
    const refusal = bearer?.refusal(headerLines(request.raw.rawHeaders, 'authorization'));
    if (refusal) {
      return sendApiResponse(reply, toErrorResponse(limiter.refuse(request, refusal, 'metrics_token'), request.id));
    }
    const text = await metrics.registry.metrics();
    return reply.header('Content-Type', metrics.registry.contentType).send(text);
  });
}
