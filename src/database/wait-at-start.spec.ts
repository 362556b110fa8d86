import { SetupRefused } from './database-setup';
import { untilReachable } from './wait-at-start';

/** An error as pg reports one: its message and code. */
const failure = (message: string, code: string) => Object.assign(new Error(message), { code });
const refused = () => failure('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED');

describe('waiting for the database at start-up', () => {
  it('tries again while the database cannot serve yet, saying why each time, and returns what the try that worked made', async () => {
    const failures = [refused(), failure('the database system is starting up', '57P03')];
    const lines: string[] = [];
    let tries = 0;
    const connected = await untilReachable(
      async () => {
        tries += 1;
        const next = failures.shift();
        if (next) throw next;
        return 'connected';
      },
      30_000,
      (line) => lines.push(line),
    );
    expect(connected).toBe('connected');
    expect(tries).toBe(3);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      /^connect ECONNREFUSED 127\.0\.0\.1:5432; trying again in 1000 ms, for up to 30 s more \(DATABASE_START_TIMEOUT_MS=30000\)$/,
    );
    expect(lines[1]).toMatch(/^the database system is starting up; trying again/);
  });

  it('fails at once, saying nothing more, on what no wait changes', async () => {
    for (const lasting of [
      new Error('DATABASE_URL (app@db/kukopay): password authentication failed', {
        cause: failure('password authentication failed for user "app"', '28P01'),
      }),
      new SetupRefused('DATABASE_URL: PostgreSQL refused its options'),
      failure('syntax error at or near "SELEC"', '42601'),
    ]) {
      const lines: string[] = [];
      let tries = 0;
      const connect = async () => {
        tries += 1;
        throw lasting;
      };
      await expect(untilReachable(connect, 30_000, (line) => lines.push(line))).rejects.toBe(lasting);
      expect([tries, lines]).toEqual([1, []]);
    }
  });

  it('reads a start-up failure by its cause, and gives up with the last failure once the time is up', async () => {
    const lines: string[] = [];
    let tries = 0;
    let last: Error | undefined;
    const connect = async () => {
      tries += 1;
      last = new Error(`DATABASE_URL (app@db/kukopay): try ${tries}`, { cause: refused() });
      throw last;
    };
    const started = Date.now();
    const thrown = await untilReachable(connect, 1500, (line) => lines.push(line)).catch((error: unknown) => error);
    expect(thrown).toBe(last);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1490);
    // A second apart, the last pause only as long as the time left.
    const pauses = lines.map((line) => Number(/in (\d+) ms/.exec(line)![1]));
    expect(pauses[0]).toBe(1000);
    expect(pauses.every((pause) => pause <= 1000)).toBe(true);
    expect(tries).toBe(lines.length + 1);
  });

  it('tries once when DATABASE_START_TIMEOUT_MS=0', async () => {
    let tries = 0;
    const connect = async () => {
      tries += 1;
      throw refused();
    };
    await expect(untilReachable(connect, 0, () => undefined)).rejects.toThrow(/ECONNREFUSED/);
    expect(tries).toBe(1);
  });
});
