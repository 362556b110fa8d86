import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The one-shot commands read their arguments before they start anything: --help prints
 * the usage and exits 0, a mistake is one line and exit 2. Each runs the built entry in
 * an empty directory without DATABASE_URL, where a purge or a migration that went ahead
 * would create .data/ for the embedded PostgreSQL.
 */
const ROOT = join(__dirname, '..');
const COMMANDS = {
  'openapi:export': 'dist/export-openapi.cli.js',
  purge: 'dist/idempotency/purge.cli.js',
  'migration:run': 'dist/database/migrate.cli.js',
  chaos: 'bench/chaos.js',
  bench: 'bench/bench.js',
};
type Command = keyof typeof COMMANDS;

describe('the commands’ arguments (README.md, the commands)', () => {
  let cwd: string;
  beforeEach(() => {
    cwd = mkdtempSync(join(tmpdir(), 'kuko-cli-'));
  });
  afterEach(() => rmSync(cwd, { recursive: true, force: true }));

  const run = (command: Command, ...args: string[]) =>
    spawnSync(process.execPath, [join(ROOT, COMMANDS[command]), ...args], {
      cwd,
      env: { ...process.env, DATABASE_URL: '' },
      encoding: 'utf8',
      timeout: 20000,
    });
  /** Nothing written where it ran: no document, no .data/ of an embedded PostgreSQL. */
  const expectNothingStarted = () => expect(readdirSync(cwd)).toEqual([]);

  it.each(Object.keys(COMMANDS) as Command[])('%s --help prints its usage and exits 0, starting nothing', (command) => {
    for (const flag of ['--help', '-h']) {
      const result = run(command, flag);
      expect(result.stderr).toBe('');
      expect(result.status).toBe(0);
      expect(result.stdout).toMatch(new RegExp(`^Usage: npm run ${command}\\b`));
      expectNothingStarted();
    }
  });

  it.each(Object.keys(COMMANDS) as Command[])('%s refuses an unknown option in one line, exit 2', (command) => {
    const result = run(command, '--bogus');
    expect(result.status).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(`${command}: unknown option '--bogus'; see --help\n`);
    expectNothingStarted();
  });

  it.each([
    ['purge', ['now'], "purge: takes no arguments, got 'now'; see --help\n"],
    ['migration:run', ['up'], "migration:run: takes no arguments, got 'up'; see --help\n"],
    [
      'openapi:export',
      ['a.json', 'b.json'],
      "openapi:export: takes at most 1 argument, got 'a.json' 'b.json'; see --help\n",
    ],
    ['bench', ['quick'], "bench: takes no arguments, got 'quick'; see --help\n"],
    ['chaos', ['--client', 'foo'], "chaos: --client takes fetch or sdk, got 'foo'; see --help\n"],
    ['chaos', ['--kills', 'many'], "chaos: --kills takes a whole number, got 'many'; see --help\n"],
    ['chaos', ['--operations'], "chaos: option '--operations <value>' argument missing; see --help\n"],
  ] as [Command, string[], string][])('%s %j is refused in one line, exit 2', (command, args, line) => {
    const result = run(command, ...args);
    expect(result.status).toBe(2);
    expect(result.stderr).toBe(line);
    expectNothingStarted();
  });

  it('openapi:export names a directory that does not exist in one line, exit 1', () => {
    const file = join(cwd, 'missing-dir', 'openapi.json');
    const result = run('openapi:export', file);
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(
      `openapi:export: cannot write ${file}: its directory ${join(cwd, 'missing-dir')} does not exist\n`,
    );
    expect(existsSync(join(cwd, 'missing-dir'))).toBe(false);
  });
});
