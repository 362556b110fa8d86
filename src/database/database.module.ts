import { DynamicModule, Logger, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource, DataSourceOptions } from 'typeorm';
import { checkDatabaseSetup, DatabaseConfig, dataSourceFor, dbOptions, failedOn } from './database-setup';
import { Db, DB_OPTIONS } from './db';
import { runMigrations } from './migrations';
import { checkSameDatabase, checkSameTables } from './same-tables';
import { untilReachable } from './wait-at-start';

/**
 * The TypeORM data source (its pool; migrations run at start-up) and Db, through which
 * repositories write SQL in the request's one transaction.
 */
@Module({})
export class DatabaseModule {
  static forRoot(url: string, config: DatabaseConfig): DynamicModule {
    const options = dbOptions(url, config);
    // Migrations run one runner at a time (runMigrations), on the direct URL when there is
    // one (they need a session), not on the pool.
    const migrationUrl = config.databaseDirectUrl
      ? ({ variable: 'DATABASE_DIRECT_URL', url: config.databaseDirectUrl } as const)
      : ({ variable: 'DATABASE_URL', url } as const);
    const poolOptions = dataSourceFor(url, options);
    /**
     * The pool, the checks that the database is set up as configured, then the migrations:
     * a start refused for its setup, or for two URLs that lead to two databases, has
     * written nothing (the migrations would have created every table in the other one).
     */
    const connect = async (resolved: DataSourceOptions): Promise<DataSource> => {
      const dataSource = await new DataSource(resolved).initialize().catch(failedOn('DATABASE_URL', url));
      try {
        await checkDatabaseSetup(dataSource, options);
        if (config.databaseDirectUrl) await checkSameDatabase(dataSource, options, config.databaseDirectUrl);
        await runMigrations(migrationUrl.url, {
          variable: migrationUrl.variable,
          log: { info: (line) => migrationsLogger.log(line), warn: (line) => migrationsLogger.warn(line) },
        }).catch(failedOn(migrationUrl.variable, migrationUrl.url));
        if (config.databaseDirectUrl) await checkSameTables(dataSource, options, config.databaseDirectUrl);
      } catch (error) {
        // What failed is the error to tell, not a failure to close after it.
        await dataSource.destroy().catch(() => undefined);
        throw error;
      }
      return dataSource;
    };
    return {
      module: DatabaseModule,
      global: true,
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: () => ({
            ...poolOptions,
            // Waited for here (untilReachable), saying why each try failed; Nest's own
            // retries would say only "Unable to connect".
            retryAttempts: 0,
            toRetry: () => false,
          }),
          dataSourceFactory: (resolved) =>
            untilReachable(
              () => connect(resolved!),
              config.databaseStartTimeoutMs,
              (line) => logger.warn(line),
            ),
        }),
      ],
      providers: [{ provide: DB_OPTIONS, useValue: options }, Db],
      exports: [Db],
    };
  }
}

const migrationsLogger = new Logger('Migrations');
const logger = new Logger('Database');
