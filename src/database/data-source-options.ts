import { join } from 'node:path';
import type { DataSourceOptions } from 'typeorm';

/**
 * Migrations are TypeScript under migrations/ and compiled to dist/migrations/. Running
 * from source (tests) this file is src/database/*.ts; built, it is dist/database/*.js.
 */
const MIGRATIONS = __filename.endsWith('.ts')
  ? join(__dirname, '..', '..', 'migrations', '*.ts')
  : join(__dirname, '..', 'migrations', '*.js');

export interface PoolOptions {
  /** Connections per process. */
  max?: number;
}

export function dataSourceOptions(url: string, pool: PoolOptions = {}): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    // Schema changes only through reviewed migrations, applied at start-up.
    synchronize: false,
    migrationsRun: true,
    migrations: [MIGRATIONS],
    migrationsTransactionMode: 'each',
    entities: [],
    logging: false,
    extra: {
      max: pool.max ?? 20,
      connectionTimeoutMillis: 5000,
      // A statement that waits this long on a lock is a bug; fail it rather than pile up.
      options: '-c lock_timeout=10000 -c idle_in_transaction_session_timeout=60000 -c TimeZone=UTC',
      application_name: 'kukopay-api',
    },
  };
}
