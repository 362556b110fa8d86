import { DynamicModule, Logger, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { checkDatabaseSetup, DatabaseConfig, dataSourceFor, dbOptions, failedOn, SetupRefused } from './database-setup';
import { Db, DB_OPTIONS } from './db';
import { runMigrations } from './migrations';
import { checkSameTables } from './same-tables';
import { isPermanentConnectFailure } from './pg-errors';

/**
 * The TypeORM data source (its pool; migrations run at start-up) and Db, through which
 * repositories write SQL in the request's one transaction.
 */
@Module({})
export class DatabaseModule {
  static forRoot(url: string, config: DatabaseConfig): DynamicModule {
    const options = dbOptions(url, config);
    // Migrations run first, one runner at a time (runMigrations), on the direct URL when
    // there is one (they need a session), not on the pool.
    const migrationUrl = config.databaseDirectUrl
      ? ({ variable: 'DATABASE_DIRECT_URL', url: config.databaseDirectUrl } as const)
      : ({ variable: 'DATABASE_URL', url } as const);
    const dataSource = dataSourceFor(url, options);
    return {
      module: DatabaseModule,
      global: true,
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: () => ({
            ...dataSource,
            retryAttempts: 3,
            retryDelay: 1000,
            // A server that cannot be reached may be starting; a refused setup, password,
            // database name, option or TLS stays refused, and is said once rather than
            // after three retries.
            toRetry: (error: unknown) => !(error instanceof SetupRefused) && !isPermanentConnectFailure(error),
          }),
          dataSourceFactory: async (resolved) => {
            await runMigrations(migrationUrl.url, {
              variable: migrationUrl.variable,
              log: { info: (line) => migrationsLogger.log(line), warn: (line) => migrationsLogger.warn(line) },
            }).catch(failedOn(migrationUrl.variable, migrationUrl.url));
            const dataSource = await new DataSource(resolved!).initialize().catch(failedOn('DATABASE_URL', url));
            try {
              await checkDatabaseSetup(dataSource, options);
              if (config.databaseDirectUrl) await checkSameTables(dataSource, options, config.databaseDirectUrl);
            } catch (error) {
              await dataSource.destroy();
              throw error;
            }
            return dataSource;
          },
        }),
      ],
      providers: [{ provide: DB_OPTIONS, useValue: options }, Db],
      exports: [Db],
    };
  }
}

const migrationsLogger = new Logger('Migrations');
