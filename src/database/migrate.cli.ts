/** `npm run migration:run`: applies pending migrations and exits (start-up does the same). */
import 'reflect-metadata';
import { loadConfig } from '../config/app-config';
import { failedOn } from './database-setup';
import { runMigrations } from './migrations';
import { stopOnSignal } from './one-shot-stop';
import { StartingDatabase } from './resolve-database';

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
