import { parseCommandLine } from './command-line';

describe('parseCommandLine', () => {
  const spec = {
    name: 'export',
    usage: 'Usage: export [file]',
    options: { count: { type: 'string' as const } },
    positionals: 1,
  };

  it('reads its options and arguments', () => {
    expect(parseCommandLine(spec, ['--count', '3', 'out.json'])).toEqual({
      values: { count: '3' },
      positionals: ['out.json'],
    });
    expect(parseCommandLine(spec, [])).toEqual({ values: {}, positionals: [] });
  });

  it('takes --help and -h', () => {
    expect(parseCommandLine(spec, ['--help'])).toEqual({ help: true });
    expect(parseCommandLine(spec, ['out.json', '-h'])).toEqual({ help: true });
  });

  it('takes a file named like an option after --', () => {
    expect(parseCommandLine(spec, ['--', '--help'])).toEqual({ values: {}, positionals: ['--help'] });
  });

  it("says what is wrong in Node's first sentence, without its advice", () => {
    expect(parseCommandLine(spec, ['--bogus'])).toEqual({ error: "unknown option '--bogus'" });
    expect(parseCommandLine(spec, ['-x'])).toEqual({ error: "unknown option '-x'" });
    expect(parseCommandLine(spec, ['--count'])).toEqual({ error: "option '--count <value>' argument missing" });
  });

  it('refuses more arguments than the command takes', () => {
    expect(parseCommandLine(spec, ['a', 'b'])).toEqual({ error: "takes at most 1 argument, got 'a' 'b'" });
    expect(parseCommandLine({ name: 'purge', usage: '' }, ['now'])).toEqual({
      error: "takes no arguments, got 'now'",
    });
  });
});
