/** `npm run migration:run`: applies pending migrations and exits (start-up does the same). */
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { loadConfig } from '../config/app-config';
import { dataSourceOptions } from './data-source-options';
import { resolveDatabase } from './resolve-database';

async function main(): Promise<void> {
  const { url, embedded } = await resolveDatabase(loadConfig(), (line) => process.stdout.write(`${line}\n`));
  const dataSource = new DataSource({ ...dataSourceOptions(url, { max: 1 }), migrationsRun: false });
  try {
    await dataSource.initialize();
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    process.stdout.write(
      applied.length ? `Applied ${applied.map((m) => m.name).join(', ')}\n` : 'No pending migrations.\n',
    );
  } finally {
    await dataSource.destroy();
    await embedded?.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`Migration failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
