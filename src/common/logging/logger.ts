import type { LoggerService } from '@nestjs/common';
import pino, { Logger } from 'pino';
import type { LogFormat, LogLevel } from '../../config/app-config';
import { prettyStream } from './pretty-stream';

/**
 * One pino logger per process, writing JSON lines to stdout. Fastify logs each request
 * through it (see request-logging.ts) and Nest's own messages go through NestPinoLogger.
 * Credentials never reach it: request lines carry only the fields we choose.
 */
export function createRootLogger(level: LogLevel, format: LogFormat = 'json'): Logger {
  const options = {
    level,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
  };
  return format === 'pretty' ? pino(options, prettyStream()) : pino(options);
}

/** Nest's start-up chatter (modules loaded, routes mapped): useful when debugging only. */
const FRAMEWORK_CONTEXTS = new Set([
  'NestFactory',
  'InstanceLoader',
  'RoutesResolver',
  'RouterExplorer',
  'NestApplication',
]);

/**
 * Nest's report of a failed start (NestFactory's ExceptionHandler). With `abortOnError:
 * false` Nest also throws the error on, and whoever started it (main.ts, worker.ts) says
 * why in its one `Failed to start:` line; written here too, every refused start said it
 * twice.
 */
const REPORTED_BY_THE_CALLER = 'ExceptionHandler';

/** Nest's LoggerService on top of pino, so framework messages are JSON lines too. */
export class NestPinoLogger implements LoggerService {
  constructor(private readonly root: Logger) {}

  log(message: unknown, context?: string) {
    this.write(context !== undefined && FRAMEWORK_CONTEXTS.has(context) ? 'debug' : 'info', message, context);
  }
  error(message: unknown, trace?: string, context?: string) {
    if ((context ?? trace) === REPORTED_BY_THE_CALLER) return;
    this.write('error', message, context ?? trace);
  }
  warn(message: unknown, context?: string) {
    this.write('warn', message, context);
  }
  debug(message: unknown, context?: string) {
    this.write('debug', message, context);
  }
  verbose(message: unknown, context?: string) {
    this.write('trace', message, context);
  }
  fatal(message: unknown, context?: string) {
    this.write('fatal', message, context);
  }

  private write(level: 'info' | 'error' | 'warn' | 'debug' | 'trace' | 'fatal', message: unknown, context?: string) {
    if (message instanceof Error) {
      // Nest may hand over the error itself: its message is not an own enumerable field,
      // so it would be lost below. The stack stays for LOG_LEVEL=debug.
      this.root[level]({ context }, message.message);
      this.root.debug({ context, stack: message.stack }, 'where it was thrown');
    } else if (typeof message === 'object' && message !== null) {
      const { msg, ...fields } = message as { msg?: string };
      this.root[level]({ context, ...fields }, msg);
    } else {
      this.root[level]({ context }, String(message));
    }
  }
}
