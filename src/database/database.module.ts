import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { AppConfig } from '../config/app-config';
import { DataSource } from 'typeorm';
import { dataSourceOptions, transactionSettings } from './data-source-options';
import { Db, DB_OPTIONS, DbOptions, settingStatement } from './db';
import { runMigrations } from './migrations';

/**
 * The TypeORM data source (its pool; migrations run at start-up) and Db, through which
 * repositories write SQL in the request's one transaction.
 */
type DatabaseConfig = Pick<AppConfig, 'databasePoolMode' | 'databasePoolSize' | 'databaseDirectUrl'>;

@Module({})
export class DatabaseModule {
  static forRoot(url: string, config: DatabaseConfig): DynamicModule {
    const mode = config.databasePoolMode;
    const options: DbOptions = {
      mode,
      poolSize: config.databasePoolSize,
      ...(mode === 'transaction' ? { settings: transactionSettings(url) } : {}),
    };
    const direct = config.databaseDirectUrl;
    // With a direct URL, migrations run there first (they need a session), not on the pool.
    const dataSource = {
      ...dataSourceOptions(url, { max: options.poolSize, mode: options.mode }),
      migrationsRun: !direct,
    };
    return {
      module: DatabaseModule,
      global: true,
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: () => ({ ...dataSource, retryAttempts: 3, retryDelay: 1000 }),
          dataSourceFactory: async (resolved) => {
            if (direct) await runMigrations(direct);
            const dataSource = await new DataSource(resolved!).initialize();
            if (options.settings) await checkSettings(dataSource, options.settings);
            return dataSource;
          },
        }),
      ],
      providers: [{ provide: DB_OPTIONS, useValue: options }, Db],
      exports: [Db],
    };
  }
}

/**
 * Behind a transaction pooler the settings are applied with every statement, not at
 * connection: one that PostgreSQL refuses (a misspelt name in DATABASE_URL's options)
 * stops the start-up here instead of failing every request.
 */
async function checkSettings(dataSource: DataSource, settings: Readonly<Record<string, string>>): Promise<void> {
  try {
    await dataSource.query(settingStatement(settings));
  } catch (error) {
    await dataSource.destroy();
    throw new Error(`DATABASE_URL: PostgreSQL refused its options (${(error as Error).message})`);
  }
}
