/**
 * `npm run worker`: notification delivery alone, without the HTTP server (scale delivery
 * apart from the API; run the API instances with NOTIFY_WORKERS=off). Same environment as
 * `npm start`; stops on SIGTERM/SIGINT/SIGHUP after the attempts in flight, for at most
 * SHUTDOWN_TIMEOUT_MS (before them while still starting).
 */
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { createRootLogger, NestPinoLogger } from './common/logging/logger';
import { startFailureText } from './common/logging/start-failure';
import { describeDatabase } from './common/logging/startup-summary';
import { drainThenExit, STOP_SIGNALS, StopSignals, stopWhileStarting } from './common/process/stop-signals';
import { loadConfig, LogLevel } from './config/app-config';
import { databaseUrlWarnings } from './config/unread-url-parameters';
import { EmbeddedDatabase } from './database/embedded-postgres';
import { StartingDatabase } from './database/resolve-database';

const logger = new Logger('Worker');
let embedded: EmbeddedDatabase | null = null;
/** Known once the configuration is accepted: whether a start failure shows its stack. */
let logLevel: LogLevel | undefined;
const starting = new StartingDatabase();
const stopSignals = new StopSignals(
  STOP_SIGNALS,
  stopWhileStarting(logger, () => starting.stop()),
  logger,
);

async function main(): Promise<void> {
  const config = loadConfig({ ...process.env, NOTIFY_WORKERS: 'on' });
  logLevel = config.logLevel;
  // One root logger, in the format LOG_FORMAT chose, for these lines and Nest's alike.
  const rootLogger = createRootLogger(config.logLevel, config.logFormat);
  Logger.overrideLogger(new NestPinoLogger(rootLogger));
  for (const line of databaseUrlWarnings(config)) logger.warn(line);
  const database = await starting.resolve(config, (line) => logger.log(line));
  embedded = database.embedded;
  // A signal came while the database started: its handler stops it and exits.
  if (stopSignals.received) return;
  const app = await NestFactory.createApplicationContext(AppModule.forRoot({ config, databaseUrl: database.url }), {
    logger: new NestPinoLogger(rootLogger),
    abortOnError: false,
  });
  await app.init();
  const shutdown = drainThenExit(logger, {
    inFlight: 'notification attempts',
    timeoutMs: config.shutdownTimeoutMs,
    close: () => app.close(),
    stopDatabase: async () => embedded?.stop(),
  });
  stopSignals.onStop((signal) => void shutdown(signal));
  const where = describeDatabase(database.url, embedded !== null);
  logger.log({
    msg: `Delivering notifications (no HTTP server in this process); database ${where}`,
    database: where,
  });
}

main().catch(async (error: unknown) => {
  // A start a signal ended fails as its database goes: the signal's handler exits.
  if (stopSignals.received) return;
  process.stderr.write(startFailureText(error, logLevel));
  await embedded?.stop();
  process.exit(1);
});
