/** `npm run migration:run`: applies pending migrations and exits (start-up does the same). */
import 'reflect-metadata';
import { loadConfig } from '../config/app-config';
import { readCommandLine } from '../config/command-line';
import { failedOn } from './database-setup';
import { runMigrations } from './migrations';
import { stopOnSignal } from './one-shot-stop';
import { StartingDatabase } from './resolve-database';

const USAGE = `
Usage: npm run migration:run   (or node dist/database/migrate.cli.js, already built)

Applies the pending migrations and exits, as start-up does; waits for another instance
applying them. Takes no arguments.

Environment: DATABASE_DIRECT_URL, else DATABASE_URL (neither: the embedded PostgreSQL of
npm start, under .data/) (README.md, docs/operations.md).
`;
readCommandLine({ name: 'migration:run', usage: USAGE });

const say = (line: string) => process.stderr.write(`${line}\n`);
const starting = new StartingDatabase();
const signals = stopOnSignal('npm run migration:run', starting, say);

async function main(): Promise<void> {
  const config = loadConfig();
  const { url, embedded } = await starting.resolve(config, (line) => process.stdout.write(`${line}\n`));
  const variable = config.databaseDirectUrl ? 'DATABASE_DIRECT_URL' : 'DATABASE_URL';
  const target = config.databaseDirectUrl ?? url;
  try {
    // Which database, as the server's start-up failures say it.
    const applied = await runMigrations(target, { variable, log: { info: say, warn: say } }).catch(
      failedOn(variable, target),
    );
    process.stdout.write(applied.length ? `Applied ${applied.join(', ')}\n` : 'No pending migrations.\n');
  } finally {
    await embedded?.stop();
  }
}

main().catch((error: unknown) => {
  // Stopped by a signal: its line said so, and the database going away is our own doing.
  if (signals.received) return;
  process.stderr.write(`Migration failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
