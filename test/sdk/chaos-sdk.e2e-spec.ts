import { spawn } from 'node:child_process';
import { join } from 'node:path';

/**
 * The short version of `npm run chaos -- --client sdk`: refund operations made by
 * @kukopay/node clients with no retry loop of their own, while the server is SIGKILLed at
 * least 3 times and PostgreSQL is restarted once. Every operation must produce exactly
 * one refund, stored under the key the client minted for it.
 */
const ARGS = ['--client', 'sdk', '--operations', '40', '--kills', '3', '--db-restarts', '1'];

describe('crash safety through @kukopay/node (npm run chaos -- --client sdk, short)', () => {
  it('loses and duplicates nothing through kills and a database restart', async () => {
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn(process.execPath, [join(__dirname, '..', '..', 'bench', 'chaos.js'), ...ARGS], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (chunk) => (output += chunk));
      child.stderr.on('data', (chunk) => (output += chunk));
      child.on('exit', (exitCode) => resolve({ code: exitCode, output }));
    });
    const line = output.split('\n').find((l) => l.startsWith('CHAOS_RESULT '));
    expect({ code, output: code === 0 && line ? 'result' : output }).toEqual({ code: 0, output: 'result' });
    const result = JSON.parse(line!.slice('CHAOS_RESULT '.length));
    expect(result).toMatchObject({
      ok: true,
      client: 'sdk',
      refunds: 40,
      amountRefunded: 40,
      lost: 0,
      duplicated: 0,
      failed: 0,
      dbRestarts: 1,
    });
    expect(result.kills).toBeGreaterThanOrEqual(3);
    // The client's own retries did the work: calls met the kills and were sent again. (How
    // many of them then succeeded on a later attempt, rather than after the documented
    // resume with their key, depends on where the kills land; both are checked above.)
    expect(result.attempts).toBeGreaterThan(result.refunds);
  }, 240000);
});
