/**
 * `npm run purge` (or `node dist/idempotency/purge.cli.js` from an external scheduler):
 * one purge of expired idempotency keys against DATABASE_URL, or the embedded PostgreSQL
 * of `npm start`. Prints what it removed on stdout and exits 0, also when another
 * instance was purging (that is not a failure); exits 1 on an error.
 */
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { loadConfig } from '../config/app-config';
import { readCommandLine } from '../config/command-line';
import { checkDatabaseSetup, dataSourceFor, dbOptions } from '../database/database-setup';
import { stopOnSignal } from '../database/one-shot-stop';
import { isUndefinedTable } from '../database/pg-errors';
import { StartingDatabase } from '../database/resolve-database';
import { describePurge, IdempotencyPurgeService, purgeFailureDetail } from './idempotency-purge.service';

const USAGE = `
Usage: npm run purge   (or node dist/idempotency/purge.cli.js, already built)

One purge of expired idempotency keys, as the scheduled job runs it: prints what it
removed on stdout and exits 0, also when another instance was purging; exits 1 on an
error. Takes no arguments.

Environment: DATABASE_URL (unset: the embedded PostgreSQL of npm start, under .data/),
and the DATABASE_POOL_* settings, read as the service reads them (README.md, docs/operations.md).
`;
readCommandLine({ name: 'purge', usage: USAGE });

// stderr, so that stdout carries only the result.
const say = (line: string) => process.stderr.write(`${line}\n`);
const starting = new StartingDatabase();
const signals = stopOnSignal('npm run purge', starting, say);

async function main(): Promise<void> {
  const config = loadConfig();
  const { url, embedded } = await starting.resolve(config, say);
  // The service's own way to the database: behind a pooler, DATABASE_URL's settings and
  // the limits apply to the purge's statements too, checked the same way at start.
  const options = { ...dbOptions(url, config), poolSize: 1 };
  // Migrations are the server's job (start-up, or npm run migration:run), not a purge's.
  const dataSource = new DataSource(dataSourceFor(url, options));
  try {
    await dataSource.initialize();
    await checkDatabaseSetup(dataSource, options);
    const result = await IdempotencyPurgeService.on(dataSource, options).purge();
    process.stdout.write(`${describePurge(result)}\n`);
  } finally {
    // Letting go of the database must not hide the purge's own outcome (or what it removed).
    if (dataSource.isInitialized) await dataSource.destroy().catch(warnNotClosed);
    await embedded?.stop().catch(warnNotClosed);
  }
}

/** A database the migrations never ran on has no keys table. */
function unmigratedHint(error: unknown): string {
  return isUndefinedTable(error)
    ? '; this database has not been migrated: run npm run migration:run, or start the service once'
    : '';
}

function warnNotClosed(error: unknown): void {
  process.stderr.write(`Could not close the database connection cleanly: ${String(error)}\n`);
}

main().catch((error: unknown) => {
  // Stopped by a signal: its line said so, and the database going away is our own doing.
  if (signals.received) return;
  // What the run removed before it failed stays removed, and is said.
  process.stderr.write(`Purge failed${purgeFailureDetail(error)}${unmigratedHint(error)}\n`);
  process.exit(1);
});
