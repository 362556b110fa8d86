/**
 * The server settings a connection URL asks for in its `options` parameter
 * (`?options=-c search_path=app -c lock_timeout=2s`), read the way libpq passes them to
 * PostgreSQL: `-c name=value`, `-cname=value` or `--name=value`, separated by spaces, a
 * backslash escaping the next character.
 *
 * Behind a transaction pooler startup options never reach PostgreSQL (PgBouncer drops or
 * refuses them), so Db applies these with every transaction instead (docs/operations.md,
 * "Behind PgBouncer"). Anything else in `options` cannot be applied that way and is
 * refused at start-up rather than silently lost.
 */
export function urlSettings(url: string): Record<string, string> {
  const options = new URL(url).searchParams.get('options');
  const settings: Record<string, string> = {};
  if (options === null) return settings;
  const words = splitOptions(options);
  for (let i = 0; i < words.length; i++) {
    const word = words[i];
    let assignment: string | undefined;
    if (word === '-c') assignment = words[++i];
    else if (word.startsWith('--')) assignment = word.slice(2);
    else if (word.startsWith('-c')) assignment = word.slice(2);
    const equals = assignment?.indexOf('=') ?? -1;
    if (assignment === undefined || equals <= 0) {
      throw new Error(`options: "${word}" is not a setting; write each as -c name=value`);
    }
    const name = assignment.slice(0, equals).replace(/-/g, '_');
    if (!/^[A-Za-z_][A-Za-z0-9_.]*$/.test(name)) throw new Error(`options: "${name}" is not a setting name`);
    if (/^(default_)?transaction_/i.test(name)) {
      // Fixed when a transaction starts, before any statement of it could set them.
      throw new Error(`options: ${name} cannot be applied per transaction; set it on the role (ALTER ROLE … SET)`);
    }
    settings[name] = assignment.slice(equals + 1);
  }
  return settings;
}

/**
 * Words separated by unescaped whitespace (C's isspace, as PostgreSQL splits them); `\x`
 * stands for x, and a backslash at the very end is dropped, as PostgreSQL drops it.
 */
function splitOptions(options: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  for (let i = 0; i < options.length; i++) {
    const char = options[i];
    if (/[ \t\n\v\f\r]/.test(char)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
      continue;
    }
    inWord = true;
    if (char !== '\\') word += char;
    else if (i + 1 < options.length) word += options[++i];
  }
  if (inWord) words.push(word);
  return words;
}
