/**
 * `npm start` / `node dist/main.js`: validates the environment, connects to DATABASE_URL
 * or starts the embedded PostgreSQL under .data/, runs migrations, creates the demo
 * merchant on first run, and serves until SIGTERM/SIGINT/SIGHUP, then drains and stops cleanly.
 */
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { createApp } from './app.factory';
import { createRootLogger, NestPinoLogger } from './common/logging/logger';
import { startupSummary } from './common/logging/startup-summary';
import { startFailureText } from './common/logging/start-failure';
import { demoKeyNotice } from './common/logging/demo-key-notice';
import { drainThenExit, STOP_SIGNALS, StopSignals, stopWhileStarting } from './common/process/stop-signals';
import { loadConfig, LogLevel } from './config/app-config';
import { databaseUrlWarnings } from './config/unread-url-parameters';
import { assertListenable, listenFailureHint } from './config/listen-address';
import { EmbeddedDatabase } from './database/embedded-postgres';
import { StartingDatabase } from './database/resolve-database';
import { MerchantsService } from './merchants/merchants.service';

const logger = new Logger('Main');

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
  const config = loadConfig();
  logLevel = config.logLevel;
  // From here on every message, Nest's included, is a pino JSON line.
  Logger.overrideLogger(new NestPinoLogger(createRootLogger(config.logLevel, config.logFormat)));
  await assertListenable(config.host, config.port);
  for (const line of databaseUrlWarnings(config)) logger.warn(line);
  const database = await starting.resolve(config, (line) => logger.log(line));
  embedded = database.embedded;
  // A signal came while the database started: its handler stops it and exits.
  if (stopSignals.received) return;
  const app = await createApp({ config, databaseUrl: database.url });
  const shutdown = drainThenExit(logger, {
    inFlight: 'requests and notification attempts',
    timeoutMs: config.shutdownTimeoutMs,
    close: () => app.close(),
    stopDatabase: async () => embedded?.stop(),
  });
  stopSignals.onStop((signal) => void shutdown(signal));

  await app.listen({ port: config.port, host: config.host });
  // A demo merchant belongs to the laptop set-up only, never to an operator's database.
  // Created once listening: a start that fails on a taken port must not use up the only
  // moment its key is shown.
  const demo = embedded ? await app.get(MerchantsService).createDemoMerchantIfNone() : null;
  const bound = app.getHttpServer().address();
  const port = typeof bound === 'object' && bound !== null ? bound.port : config.port;
  const summary = startupSummary({
    config,
    port,
    databaseUrl: database.url,
    embedded: embedded !== null,
  });
  const url = summary.fields.url as string;
  if (demo) process.stdout.write(demoKeyNotice(config.logFormat, { id: demo.id, testKey: demo.api_keys.test }, url));
  logger.log({ msg: summary.msg, ...summary.fields });
}

main().catch(async (error: unknown) => {
  // A start a signal ended fails as its database goes: the signal's handler exits.
  if (stopSignals.received) return;
  const hint = listenFailureHint(error);
  process.stderr.write(
    hint ? `Failed to start: ${(error as Error).message}; ${hint}\n` : startFailureText(error, logLevel),
  );
  await embedded?.stop();
  process.exit(1);
});
