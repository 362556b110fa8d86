import { ConfigError, LogLevel } from '../../config/app-config';

/**
 * What a process that could not start prints on stderr (`npm start`, `npm run worker`):
 * a configuration error as it is, anything else as its message, which says what failed
 * (a database URL names its variable); the stack, for debugging the service itself, only
 * with LOG_LEVEL=debug or trace. `logLevel` is undefined when the configuration was refused.
 */
export function startFailureText(error: unknown, logLevel: LogLevel | undefined): string {
  if (error instanceof ConfigError) return `${error.message}\n`;
  const debugging = logLevel === 'debug' || logLevel === 'trace';
  const text = error instanceof Error ? ((debugging ? error.stack : undefined) ?? error.message) : String(error);
  return `Failed to start: ${text}${debugging ? '' : ' (LOG_LEVEL=debug shows where)'}\n`;
}
