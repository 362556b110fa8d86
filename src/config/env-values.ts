/**
 * Reading one environment variable, for every part of the configuration: empty counts as
 * unset, and a bad value throws ConfigError naming the variable.
 */
export type Env = Record<string, string | undefined>;

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    detail: string,
  ) {
    super(`Invalid configuration: ${variable} ${detail}`);
    this.name = 'ConfigError';
  }
}

/** The trimmed value, or undefined when unset or blank. */
export function value(env: Env, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw.trim() === '' ? undefined : raw.trim();
}

export function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = value(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(name, `must be a whole number from ${min} to ${max} (got "${raw}")`);
  }
  return Number(raw);
}

export function onOff(env: Env, name: string, fallback: boolean): boolean {
  const typed = value(env, name);
  if (typed === undefined) return fallback;
  const word = typed.toLowerCase();
  if (['on', 'true', '1', 'yes'].includes(word)) return true;
  if (['off', 'false', '0', 'no'].includes(word)) return false;
  throw new ConfigError(name, `must be on/off or true/false (got "${typed}")`);
}

/**
 * The bytes of strict base64 text, or null. Node decodes leniently (it skips what is not
 * base64 and stops early); re-encoding tells truncated or mistyped text apart.
 */
export function strictBase64(text: string): Buffer | null {
  const bytes = Buffer.from(text, 'base64');
  return bytes.toString('base64').replace(/=+$/, '') === text.replace(/=+$/, '') ? bytes : null;
}
