import { loadConfig } from '../../config/app-config';
import { startupSummary } from './startup-summary';

describe('startupSummary', () => {
  const facts = (env: Record<string, string>) => ({
    config: loadConfig({ DATABASE_URL: 'postgres://app:secret@pgbouncer:6432/kukopay', ...env }, false),
    port: 3000,
    databaseUrl: env.DATABASE_URL ?? 'postgres://app:secret@pgbouncer:6432/kukopay',
    embedded: false,
  });
  const pooled = { DATABASE_POOL_MODE: 'transaction', DATABASE_DIRECT_URL: 'postgres://app:secret@primary/kukopay' };

  it('names the database without its password, and nothing more when it is reached directly', () => {
    const { msg, fields } = startupSummary(facts({}));
    expect(msg).toContain('database app@pgbouncer:6432/kukopay; ');
    expect(fields).toMatchObject({ database: 'app@pgbouncer:6432/kukopay', database_pool: 'session' });
    expect(msg).not.toContain('secret');
  });

  it('gives a URL a client can use, an IPv6 address in brackets', () => {
    expect(startupSummary(facts({ HOST: '::1' })).fields.url).toBe('http://[::1]:3000');
    expect(startupSummary(facts({ HOST: '127.0.0.1' })).fields.url).toBe('http://127.0.0.1:3000');
    expect(startupSummary(facts({ HOST: '::' })).fields.url).toBe('http://localhost:3000');
  });

  it('says how it goes through a transaction pooler', () => {
    expect(startupSummary(facts(pooled)).msg).toContain(
      'database app@pgbouncer:6432/kukopay (transaction pooling: nothing prepared, limits sent per transaction); ',
    );
    const tuned = facts({ ...pooled, DATABASE_POOL_PREPARED_STATEMENTS: 'on', DATABASE_POOL_ROLE_SETTINGS: 'on' });
    expect(startupSummary(tuned).fields.database_pool).toBe(
      'transaction pooling: statements prepared, limits set by the role',
    );
  });
});
