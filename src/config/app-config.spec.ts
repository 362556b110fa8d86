import { ConfigError, loadConfig } from './app-config';

const WHSEC = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    expect(loadConfig({}, false)).toEqual({
      port: 3000,
      host: '0.0.0.0',
      databaseUrl: null,
      databaseDirectUrl: null,
      databasePoolMode: 'session',
      databasePoolPreparedStatements: false,
      databasePoolRoleSettings: false,
      databasePoolSize: 20,
      databaseStartTimeoutMs: 30000,
      requestTimeoutMs: 30000,
      shutdownTimeoutMs: 25000,
      adminToken: null,
      webhookSecrets: new Map(),
      idempotencyTtlSeconds: 86400,
      idempotencyPurgeCron: '*/10 * * * *',
      logLevel: 'info',
      logFormat: 'json',
      metricsToken: null,
      notifications: {
        workers: true,
        concurrency: 10,
        retrySchedule: [0, 5000, 305000, 2105000, 9305000, 27305000, 63305000, 99305000],
        timeoutMs: 10000,
        allowPrivateNetworks: false,
        encryptionKey: null,
      },
    });
  });

  it('logs pretty lines by default only under npm start on a terminal', () => {
    expect(loadConfig({ npm_lifecycle_event: 'start' }, true).logFormat).toBe('pretty');
    expect(loadConfig({ npm_lifecycle_event: 'start' }, false).logFormat).toBe('json');
    expect(loadConfig({}, true).logFormat).toBe('json');
    expect(loadConfig({ npm_lifecycle_event: 'start', LOG_FORMAT: 'json' }, true).logFormat).toBe('json');
    expect(loadConfig({ LOG_FORMAT: 'pretty' }, false).logFormat).toBe('pretty');
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://localhost/db'],
    ['DATABASE_URL', 'not a url'],
    ['DATABASE_URL', 'postgres://localhost/db?sslmode=bogus'],
    ['DATABASE_URL', 'postgres://localhost/db?sslmode=allow'],
    ['DATABASE_URL', 'postgres://localhost/db?sslmode=prefer'],
    ['PGSSLMODE', 'prefer'],
    ['PGSSLMODE', 'bogus'],
    // The check would read verify-full, pg disable.
    ['DATABASE_URL', 'postgres://localhost/db?sslmode=verify-full&sslmode=disable'],
    ['DATABASE_DIRECT_URL', 'postgres://localhost/db?options=-c%20a%3D1&options=-c%20b%3D2'],
    ['DATABASE_DIRECT_URL', 'mysql://localhost/db'],
    ['DATABASE_POOL_MODE', 'statement'],
    ['DATABASE_POOL_SIZE', '1'],
    ['DATABASE_START_TIMEOUT_MS', '-1'],
    ['DATABASE_START_TIMEOUT_MS', '30s'],
    ['REQUEST_TIMEOUT_MS', '10'],
    ['SHUTDOWN_TIMEOUT_MS', 'soon'],
    ['SHUTDOWN_TIMEOUT_MS', '0'],
    ['DATABASE_URL', 'postgres://kuko:50%ZZoff@localhost/db'],
    ['DATABASE_URL', 'postgres://localhost/kuko%'],
    ['ADMIN_TOKEN', 'short'],
    ['IDEMPOTENCY_TTL_SECONDS', '0'],
    ['IDEMPOTENCY_TTL_SECONDS', '1.5'],
    ['IDEMPOTENCY_PURGE_CRON', 'every ten minutes'],
    ['IDEMPOTENCY_PURGE_CRON', '0 0 31 2 *'],
    ['LOG_LEVEL', 'loud'],
    ['LOG_FORMAT', 'colourful'],
    ['HOST', 'every interface'],
    ['HOST', '999.1.1.1'],
    ['HOST', '10.1'],
    ['METRICS_TOKEN', 'short'],
    ['NOTIFY_WORKERS', 'maybe'],
    ['NOTIFY_WORKER_CONCURRENCY', '0'],
    ['NOTIFY_RETRY_SCHEDULE', '0,5x'],
    ['NOTIFY_RETRY_SCHEDULE', '0,5m,-1m'],
    ['NOTIFY_RETRY_SCHEDULE', '0,1000h'],
    ['NOTIFY_TIMEOUT_MS', 'ten'],
    ['NOTIFY_ALLOW_PRIVATE_NETWORKS', 'sure'],
    ['ENCRYPTION_KEY', 'c2hvcnQ='],
    ['WEBHOOK_SECRETS', 'kukopay'],
    ['WEBHOOK_SECRETS', 'kukopay=secret'],
    ['WEBHOOK_SECRETS', 'kukopay=whsec_!!!'],
    ['WEBHOOK_SECRETS', `kukopay=${WHSEC},kukopay=${WHSEC}`],
    ['WEBHOOK_SECRETS', `Bad Name=${WHSEC}`],
    ['WEBHOOK_SECRETS', `kukopay:staging=${WHSEC}`],
    ['WEBHOOK_SECRETS', `kukopay:test=${WHSEC},kukopay:test=${WHSEC}`],
  ])('refuses %s=%s, naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^Invalid configuration: ${name} `));
  });

  it('reads PGSSLMODE only where pg would: a URL naming its own sslmode makes it irrelevant', () => {
    expect(() => loadConfig({ PGSSLMODE: 'prefer', DATABASE_URL: 'postgres://localhost/db' })).toThrow(/PGSSLMODE/);
    expect(
      loadConfig({ PGSSLMODE: 'prefer', DATABASE_URL: 'postgres://localhost/db?sslmode=verify-full' }).databaseUrl,
    ).toBe('postgres://localhost/db?sslmode=verify-full');
  });

  it('takes every sslmode the pg driver implements', () => {
    for (const mode of ['disable', 'require', 'verify-ca', 'verify-full', 'no-verify']) {
      const url = `postgres://localhost/db?sslmode=${mode}`;
      expect(loadConfig({ DATABASE_URL: url }).databaseUrl).toBe(url);
    }
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
    expect(() => loadConfig({ WEBHOOK_SECRETS: `kukopay=${secret}` })).toThrow(
      /entry #1, secret #1 of provider "kukopay"/,
    );
    try {
      loadConfig({ WEBHOOK_SECRETS: `kukopay=${secret}` });
    } catch (error) {
      expect((error as Error).message).not.toContain('notbase64');
    }
  });

  it.each([
    ['too short (16 bytes)', `whsec_${Buffer.alloc(16, 7).toString('base64')}`, /decodes to 16 bytes; at least 24/],
    ['truncated base64', `whsec_${Buffer.alloc(32, 7).toString('base64').slice(0, -3)}`, /is not valid base64/],
    ['not base64', 'whsec_not*base64*but*long*enough*to*pass', /must be whsec_ followed by base64/],
  ])('stops the boot on a secret %s, naming its entry by position and never the secret', (_, secret, reason) => {
    const run = () => loadConfig({ WEBHOOK_SECRETS: `kukopay=${WHSEC}, other:live=${WHSEC} ${secret}` });
    expect(run).toThrow(/^Invalid configuration: WEBHOOK_SECRETS entry #2, secret #2 of provider "other" /);
    expect(run).toThrow(reason);
    expect(() => run()).not.toThrow(secret.slice(6, 20));
  });

  it('keeps per-environment secrets apart from the ones that sign both', () => {
    const other = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
    const secrets = loadConfig({
      WEBHOOK_SECRETS: `kukopay=${WHSEC},kukopay:test=${other}, kukopay:live=${other}`,
    }).webhookSecrets.get('kukopay')!;
    expect(secrets.map((secret) => secret.environments)).toEqual([['test', 'live'], ['test'], ['live']]);
  });

  it('parses several providers and rotated secrets', () => {
    const config = loadConfig({ WEBHOOK_SECRETS: `kukopay=${WHSEC} ${WHSEC}, other=${WHSEC}` });
    expect([...config.webhookSecrets.keys()]).toEqual(['kukopay', 'other']);
    expect(config.webhookSecrets.get('kukopay')).toHaveLength(2);
  });

  it('refuses transaction pooling without a direct URL for migrations and the queue', () => {
    expect(() => loadConfig({ DATABASE_POOL_MODE: 'transaction', DATABASE_URL: 'postgres://pgbouncer/db' })).toThrow(
      /^Invalid configuration: DATABASE_DIRECT_URL must be set when DATABASE_POOL_MODE=transaction/,
    );
  });

  // Without a transaction pooler, statements are always prepared and the limits are
  // startup options: asking for either is a mistake.
  it.each([
    ['DATABASE_POOL_PREPARED_STATEMENTS', 'databasePoolPreparedStatements'],
    ['DATABASE_POOL_ROLE_SETTINGS', 'databasePoolRoleSettings'],
  ] as const)('takes %s only behind a transaction pooler, where it means something', (name, field) => {
    const pooled = { DATABASE_URL: 'postgres://pgbouncer/db', DATABASE_DIRECT_URL: 'postgres://primary/db' };
    const on = { ...pooled, DATABASE_POOL_MODE: 'transaction', [name]: 'on' };
    expect(loadConfig(on)[field]).toBe(true);
    expect(() => loadConfig({ ...pooled, [name]: 'on' })).toThrow(
      new RegExp(`^Invalid configuration: ${name} applies only with DATABASE_POOL_MODE=transaction`),
    );
    expect(() => loadConfig({ ...on, [name]: 'maybe' })).toThrow(new RegExp(`${name} must be on/off`));
  });

  // Switches already take OFF and On; the named settings take any case the same way.
  it('reads the named settings in any case', () => {
    const config = loadConfig({ LOG_LEVEL: 'INFO', LOG_FORMAT: 'Pretty' });
    expect([config.logLevel, config.logFormat]).toEqual(['info', 'pretty']);
    const pooled = { DATABASE_URL: 'postgres://pgbouncer/db', DATABASE_DIRECT_URL: 'postgres://primary/db' };
    expect(loadConfig({ ...pooled, DATABASE_POOL_MODE: 'Transaction' }).databasePoolMode).toBe('transaction');
    // A refusal quotes what was typed.
    expect(() => loadConfig({ LOG_LEVEL: 'Verbose' })).toThrow('(got "Verbose")');
    expect(() => loadConfig({ NOTIFY_WORKERS: 'Maybe' })).toThrow('(got "Maybe")');
  });

  it.each([
    ['a trailing comma', `kukopay=${WHSEC},`, 'entry #2'],
    ['two commas in a row', `kukopay=${WHSEC},,other=${WHSEC}`, 'entry #2'],
    ['a leading comma', ` ,kukopay=${WHSEC}`, 'entry #1'],
  ])('says which webhook secrets entry is empty after %s', (_, secrets, entry) => {
    expect(() => loadConfig({ WEBHOOK_SECRETS: secrets })).toThrow(
      `Invalid configuration: WEBHOOK_SECRETS ${entry} is empty; remove the extra comma`,
    );
  });

  it('switches the purge schedule off', () => {
    expect(loadConfig({ IDEMPOTENCY_PURGE_CRON: 'off' }).idempotencyPurgeCron).toBeNull();
  });
});
