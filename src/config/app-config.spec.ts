import { ConfigError, loadConfig } from './app-config';

const WHSEC = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    expect(loadConfig({})).toEqual({
      port: 3000,
      databaseUrl: null,
      adminToken: null,
      webhookSecrets: new Map(),
      idempotencyTtlSeconds: 86400,
      idempotencyPurgeCron: '*/10 * * * *',
      logLevel: 'info',
      notifications: {
        workers: true,
        concurrency: 10,
        retrySchedule: [0, 5000, 300000, 1800000, 7200000, 18000000, 36000000, 36000000],
        timeoutMs: 10000,
        allowPrivateNetworks: false,
        encryptionKey: null,
      },
    });
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://localhost/db'],
    ['DATABASE_URL', 'not a url'],
    ['ADMIN_TOKEN', 'short'],
    ['IDEMPOTENCY_TTL_SECONDS', '0'],
    ['IDEMPOTENCY_TTL_SECONDS', '1.5'],
    ['IDEMPOTENCY_PURGE_CRON', 'every ten minutes'],
    ['LOG_LEVEL', 'loud'],
    ['NOTIFY_WORKERS', 'maybe'],
    ['NOTIFY_WORKER_CONCURRENCY', '0'],
    ['NOTIFY_RETRY_SCHEDULE', '0,5x'],
    ['NOTIFY_RETRY_SCHEDULE', '0,5m,1m'],
    ['NOTIFY_TIMEOUT_MS', 'ten'],
    ['NOTIFY_ALLOW_PRIVATE_NETWORKS', 'sure'],
    ['ENCRYPTION_KEY', 'c2hvcnQ='],
    ['WEBHOOK_SECRETS', 'kukopay'],
    ['WEBHOOK_SECRETS', 'kukopay=secret'],
    ['WEBHOOK_SECRETS', 'kukopay=whsec_!!!'],
    ['WEBHOOK_SECRETS', `kukopay=${WHSEC},kukopay=${WHSEC}`],
    ['WEBHOOK_SECRETS', `Bad Name=${WHSEC}`],
  ])('refuses %s=%s, naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^Invalid configuration: ${name} `));
  });

  it('never echoes an entry that may be a bare secret', () => {
    for (const entry of [WHSEC, `Kukopay=${WHSEC}`, `kukopay:${WHSEC}`]) {
      expect(() => loadConfig({ WEBHOOK_SECRETS: entry })).toThrow(/entry #1 must be provider=whsec_/);
      try {
        loadConfig({ WEBHOOK_SECRETS: entry });
      } catch (error) {
        expect((error as Error).message).not.toContain(WHSEC.slice(6, 20));
      }
    }
  });

  it('never echoes a webhook secret in its message', () => {
    const secret = 'whsec_notbase64!';
    expect(() => loadConfig({ WEBHOOK_SECRETS: `kukopay=${secret}` })).toThrow(/secret #1 of provider "kukopay"/);
    try {
      loadConfig({ WEBHOOK_SECRETS: `kukopay=${secret}` });
    } catch (error) {
      expect((error as Error).message).not.toContain('notbase64');
    }
  });

  it('parses several providers and rotated secrets', () => {
    const config = loadConfig({ WEBHOOK_SECRETS: `kukopay=${WHSEC} ${WHSEC}, other=${WHSEC}` });
    expect([...config.webhookSecrets.keys()]).toEqual(['kukopay', 'other']);
    expect(config.webhookSecrets.get('kukopay')).toHaveLength(2);
  });

  it('switches the purge schedule off', () => {
    expect(loadConfig({ IDEMPOTENCY_PURGE_CRON: 'off' }).idempotencyPurgeCron).toBeNull();
  });
});
