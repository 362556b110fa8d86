import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { AppConfig } from '../config/app-config';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from './data-source-options';
import { Db, DB_OPTIONS, DbOptions } from './db';
import { runMigrations } from './migrations';

/**
 * The TypeORM data source (its pool; migrations run at start-up) and Db, through which
 * repositories write SQL in the request's one transaction.
 */
type DatabaseConfig = Pick<AppConfig, 'databasePoolMode' | 'databasePoolSize' | 'databaseDirectUrl'>;

@Module({})
export class DatabaseModule {
  static forRoot(url: string, config: DatabaseConfig): DynamicModule {
    const options: DbOptions = { mode: config.databasePoolMode, poolSize: config.databasePoolSize };
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
            return new DataSource(resolved!).initialize();
          },
        }),
      ],
      providers: [{ provide: DB_OPTIONS, useValue: options }, Db],
      exports: [Db],
    };
  }
}
