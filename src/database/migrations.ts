import { DataSource } from 'typeorm';
import { dataSourceOptions } from './data-source-options';

/**
 * Applies pending migrations on a connection of their own and returns their names. Used by
 * `npm run migration:run`, and at start-up when DATABASE_DIRECT_URL is set: migrations
 * need a session (a transaction pooler cannot give one), so they go to the server directly.
 */
export async function runMigrations(url: string): Promise<string[]> {
  const dataSource = new DataSource({ ...dataSourceOptions(url, { max: 1 }), migrationsRun: false });
  await dataSource.initialize();
  try {
    return (await dataSource.runMigrations({ transaction: 'each' })).map((migration) => migration.name);
  } finally {
    await dataSource.destroy();
  }
}
