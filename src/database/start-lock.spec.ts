import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTimeOf, takeStartLock } from './start-lock';

describe('the start lock of the embedded PostgreSQL', () => {
  let dir: string;
  let lock: string;
  const lines: string[] = [];
  const notice = (line: string) => lines.push(line);

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'kuko-lock-'));
    lock = join(dir, 'pg-starting');
    lines.length = 0;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('waits while another live process holds it, and takes it once that process has ended', async () => {
    const holder = spawn('sleep', ['30']);
    await new Promise((resolve) => holder.once('spawn', resolve));
    writeFileSync(lock, `${holder.pid} ${startTimeOf(holder.pid!)}\n`);
    const taking = takeStartLock(lock, 'it', notice);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(lines).toEqual([`waiting for process ${holder.pid}, which is starting it`]);
    holder.kill('SIGKILL');
    const release = await taking;
    expect(lines[1]).toBe(`process ${holder.pid} ended while starting it; no longer waiting for it`);
    expect(readFileSync(lock, 'utf8')).toMatch(new RegExp(`^${process.pid} \\d+\\n$`));
    await release();
    expect(existsSync(lock)).toBe(false);
  });

  it('takes a lock whose PID now belongs to another process (started at another time) at once', async () => {
    const other = spawn('sleep', ['30']);
    await new Promise((resolve) => other.once('spawn', resolve));
    try {
      writeFileSync(lock, `${other.pid} 1\n`);
      await (
        await takeStartLock(lock, 'it', notice)
      )();
      expect(lines).toEqual([`process ${other.pid} ended while starting it; no longer waiting for it`]);
    } finally {
      other.kill('SIGKILL');
    }
  });

  it('leaves alone a lock another start took after its own was broken, and a breaker that died', async () => {
    const release = await takeStartLock(lock, 'it', notice);
    // Broken meanwhile (this process looked dead to another start), and taken by it.
    writeFileSync(lock, '4194305 1\n');
    await release();
    expect(readFileSync(lock, 'utf8')).toBe('4194305 1\n');
    // A waiter that died while breaking a lock left its mark: the next waiter removes it.
    writeFileSync(`${lock}.broken`, '4194305\n');
    await (
      await takeStartLock(lock, 'it', notice)
    )();
    expect(existsSync(`${lock}.broken`)).toBe(false);
  });
});
