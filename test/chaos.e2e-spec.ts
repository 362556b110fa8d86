import { spawn } from 'node:child_process';
import { join } from 'node:path';

/**
 * The short version of `npm run chaos`: 60 refund operations protected only by their
 * Idempotency-Key, and 20 payments by provider webhook, while the server is SIGKILLed at
 * least 3 times and PostgreSQL is restarted once. Every operation must produce exactly one
 * refund, and every paid order its notification.
 */
describe('crash safety (npm run chaos, short)', () => {
  it('loses and duplicates nothing through kills and a database restart', async () => {
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        [
          join(__dirname, '..', 'bench', 'chaos.js'),
          '--operations',
          '60',
          '--kills',
          '3',
          '--db-restarts',
          '1',
          '--payments',
          '20',
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let output = '';
      child.stdout.on('data', (chunk) => (output += chunk));
      child.stderr.on('data', (chunk) => (output += chunk));
      child.on('exit', (exitCode) => resolve({ code: exitCode, output }));
    });
    const line = output.split('\n').find((l) => l.startsWith('CHAOS_RESULT '));
    expect({ code, output: line ? 'result' : output }).toEqual({ code: 0, output: 'result' });
    const result = JSON.parse(line!.slice('CHAOS_RESULT '.length));
    expect(result).toMatchObject({
      ok: true,
      refunds: 60,
      amountRefunded: 60,
      lost: 0,
      duplicated: 0,
      failed: 0,
      dbRestarts: 1,
    });
    expect(result.kills).toBeGreaterThanOrEqual(3);
    // Orders paid by webhooks under the same kills: each paid once and notified (once after dedup).
    expect(result).toMatchObject({
      payments: 20,
      paidOrders: 20,
      paymentEvents: 20,
      notifiedOrders: 20,
      undelivered: 0,
    });
  }, 180000);
});
