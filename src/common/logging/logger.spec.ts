import pino from 'pino';
import { Writable } from 'node:stream';
import { NestPinoLogger } from './logger';

/** A NestPinoLogger whose JSON lines are collected. */
function collecting(level: pino.Level) {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { logger: new NestPinoLogger(pino({ level }, sink)), lines };
}

describe('NestPinoLogger', () => {
  it('writes an error handed over as such with its message, and its stack only at debug', () => {
    const info = collecting('info');
    info.logger.error(new Error('PostgreSQL refused its options'), undefined, 'Scheduler');
    expect(info.lines).toEqual([
      expect.objectContaining({ level: 50, context: 'Scheduler', msg: 'PostgreSQL refused its options' }),
    ]);
    expect(JSON.stringify(info.lines)).not.toContain('logger.spec');

    const debug = collecting('debug');
    debug.logger.error(new Error('refused'), undefined, 'Scheduler');
    expect(debug.lines[1]).toMatchObject({ level: 20, stack: expect.stringContaining('logger.spec') });
  });

  // main.ts and worker.ts say it, in their `Failed to start:` line.
  it("leaves a failed start to the process that started Nest: its ExceptionHandler's line is not written", () => {
    const info = collecting('info');
    info.logger.error(new Error('DATABASE_URL: PostgreSQL refused its options'), undefined, 'ExceptionHandler');
    info.logger.error('DATABASE_URL: PostgreSQL refused its options', 'at main.ts:1', 'ExceptionHandler');
    expect(info.lines).toEqual([]);
  });
});
