import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

describe('start-up (SPEC §2)', () => {
  it('stops with a message naming the variable when the configuration is bad', () => {
    const result = spawnSync(process.execPath, [join(__dirname, '..', 'dist', 'main.js')], {
      env: { ...process.env, PORT: 'eighty', DATABASE_URL: '' },
      encoding: 'utf8',
      timeout: 20000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('Invalid configuration: PORT must be a whole number');
  });
});
