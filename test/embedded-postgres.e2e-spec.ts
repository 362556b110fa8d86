import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAlive, startEmbeddedPostgres } from '../src/database/embedded-postgres';
import { isPostmasterOf } from '../src/database/postmaster-process';

describe('the embedded PostgreSQL and a postmaster.pid left behind', () => {
  it('neither adopts nor stops a process that is not a postgres serving the data directory', async () => {
    const home = mkdtempSync(join(tmpdir(), 'kukopay-pid-'));
    // Another program now holds the PID that a stale postmaster.pid names.
    const stranger = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      const dataDir = join(home, 'pg');
      mkdirSync(dataDir);
      writeFileSync(join(dataDir, 'postmaster.pid'), `${stranger.pid}\n${dataDir}\n1764403200\n54999\n`);
      expect(isPostmasterOf(stranger.pid!, dataDir)).toBe(false);

      await expect(startEmbeddedPostgres({ dir: home, durable: false, notice: () => undefined })).rejects.toThrow(
        /names PID \d+, which is not a PostgreSQL serving this directory \(it is sleep 60\)\. If no PostgreSQL uses/,
      );
      expect(isAlive(stranger.pid!)).toBe(true);
    } finally {
      stranger.kill('SIGKILL');
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('recognises a postgres by its command line and data directory only', () => {
    const argv = (pid: number) => isPostmasterOf(pid, '/nowhere/pg');
    // This process is node, not postgres.
    expect(argv(process.pid)).toBe(false);
    // A PID that does not exist.
    expect(argv(2 ** 22 + 12345)).toBe(false);
  });
});
