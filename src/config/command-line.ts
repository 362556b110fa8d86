import { parseArgs, type ParseArgsConfig } from 'node:util';

/** What a one-shot command (`npm run purge`, `migration:run`, `openapi:export`, `bench`, `chaos`) takes. */
export interface CommandLineSpec {
  /** As the error line starts: the npm script's name. */
  name: string;
  /** Printed on --help: what it does, its arguments, the environment it reads. */
  usage: string;
  /** Its options, beside --help / -h. */
  options?: NonNullable<ParseArgsConfig['options']>;
  /** How many arguments that are not options it takes, at most. */
  positionals?: number;
}

export type ParsedCommandLine =
  { help: true } | { error: string } | { values: Record<string, string | boolean | undefined>; positionals: string[] };

/**
 * The arguments, read strictly: a command that ignored an argument it does not know ran a
 * purge, the migrations or a 6-minute bench when asked for --help, and wrote a file named
 * `--help`.
 */
export function parseCommandLine(spec: CommandLineSpec, argv: string[]): ParsedCommandLine {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: { ...spec.options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    // parseArgs throws only its own TypeErrors (not instanceof Error under Jest's realms).
    return { error: firstSentence((error as Error).message) };
  }
  const { help, ...values } = parsed.values;
  if (help) return { help: true };
  const most = spec.positionals ?? 0;
  if (parsed.positionals.length > most) {
    const got = parsed.positionals.map((argument) => `'${argument}'`).join(' ');
    const takes = most === 0 ? 'no arguments' : `at most ${most} argument${most === 1 ? '' : 's'}`;
    return { error: `takes ${takes}, got ${got}` };
  }
  return { values, positionals: parsed.positionals };
}

/**
 * parseArgs, before anything starts, for a command's process: --help prints the usage and
 * exits 0; a mistake is one line on stderr (no stack: it is the caller's typo, not a
 * failure) and exits 2, the usual code for a usage error.
 */
export function readCommandLine(spec: CommandLineSpec, argv = process.argv.slice(2)) {
  const parsed = parseCommandLine(spec, argv);
  if ('help' in parsed) {
    process.stdout.write(`${spec.usage.trim()}\n`);
    process.exit(0);
  }
  if ('error' in parsed) refuseArguments(spec.name, parsed.error);
  return parsed;
}

/** The same one line and exit 2, for a value the command checks itself (a count, a choice). */
export function refuseArguments(name: string, what: string): never {
  process.stderr.write(`${name}: ${what}; see --help\n`);
  process.exit(2);
}

/** Node's "Unknown option '--x'. To specify a positional argument…" without its advice. */
function firstSentence(message: string): string {
  const sentence = message.split(/\.\s/)[0].replace(/\.$/, '');
  return sentence.charAt(0).toLowerCase() + sentence.slice(1);
}
