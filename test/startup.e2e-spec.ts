import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

describe('start-up (SPEC §2)', () => {
  const start = (env: Record<string, string>) =>
    spawnSync(process.execPath, [join(__dirname, '..', 'dist', 'main.js')], {
      env: { ...process.env, DATABASE_URL: '', ...env },
      encoding: 'utf8',
      timeout: 20000,
    });

  it('stops with a message naming the variable when the configuration is bad', () => {
    const result = start({ PORT: 'eighty' });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('Invalid configuration: PORT must be a whole number');
  });

  it('stops at start-up on a malformed webhook secret, without printing it', () => {
    const result = start({ WEBHOOK_SECRETS: 'kukopay=whsec_c2VjcmV0 whsec_not*base64' });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('Invalid configuration: WEBHOOK_SECRETS secret #2 of provider "kukopay"');
    expect(result.stderr).not.toContain('not*base64');
  });
});
