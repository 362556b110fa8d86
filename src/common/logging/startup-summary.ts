import { isIP } from 'node:net';
import { describeDatabaseUrl } from '../../database/describe-url';
import type { AppConfig } from '../../config/app-config';
import { describeWebhookProviders } from '../../config/webhook-secrets';

/** Whether this instance's workers deliver merchant notifications (NOTIFY_WORKERS), and why. */
function notificationsStatus(config: AppConfig): { delivering: boolean; detail: string } {
  const { workers, concurrency } = config.notifications;
  return workers
    ? { delivering: true, detail: `${concurrency} attempts at a time` }
    : { delivering: false, detail: 'NOTIFY_WORKERS=off: another instance or npm run worker must deliver' };
}

/** How the service reaches DATABASE_URL: directly, or through a transaction pooler and how. */
function poolDescription(config: AppConfig): string {
  if (config.databasePoolMode === 'session') return 'session';
  const statements = config.databasePoolPreparedStatements ? 'statements prepared' : 'nothing prepared';
  const limits = config.databasePoolRoleSettings ? 'limits set by the role' : 'limits sent per transaction';
  return `transaction pooling: ${statements}, ${limits}`;
}

export interface StartupFacts {
  config: AppConfig;
  /** The port actually bound (PORT=0 picks one). */
  port: number;
  databaseUrl: string;
  embedded: boolean;
}

/**
 * The one info line an operator reads at start-up: where the service listens, which
 * database (never its password), which webhook providers, whether notifications deliver.
 * It says "Listening on", which scripts and tests wait for.
 */
export function startupSummary(facts: StartupFacts): { msg: string; fields: Record<string, unknown> } {
  const { config, port } = facts;
  const notifications = notificationsStatus(config);
  const wildcard = config.host === '0.0.0.0' || config.host === '::';
  // An IPv6 address goes in brackets in a URL (`http://[::1]:3000`), or curl cannot read it.
  const host = wildcard ? 'localhost' : isIP(config.host) === 6 ? `[${config.host}]` : config.host;
  const url = `http://${host}:${port}`;
  const database = describeDatabase(facts.databaseUrl, facts.embedded);
  const pool = poolDescription(config);
  const webhooks = describeWebhookProviders(config.webhookSecrets);
  const delivery = `${notifications.delivering ? 'delivering' : 'not delivering'} (${notifications.detail})`;
  return {
    msg:
      `Listening on ${url} (bound to ${config.host}:${port}; OpenAPI at ${url}/docs); ` +
      `database ${database}${pool === 'session' ? '' : ` (${pool})`}; ` +
      `webhooks: ${webhooks}; notifications: ${delivery}`,
    fields: {
      url,
      host: config.host,
      port,
      database,
      database_pool: pool,
      webhook_providers: [...config.webhookSecrets.keys()],
      notifications_delivering: notifications.delivering,
      metrics: config.metricsToken ? '/metrics (bearer token)' : '/metrics',
    },
  };
}

/** The database as start-up lines name it: user, host, port and name, never the password. */
export function describeDatabase(url: string, embedded: boolean): string {
  return `${describeDatabaseUrl(url)}${embedded ? ' (embedded)' : ''}`;
}
