import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { dataSourceOptions } from './data-source-options';
import { Db } from './db';

/**
 * The TypeORM data source (its pool; migrations run at start-up) and Db, through which
 * services write SQL in the request's one transaction.
 */
@Module({})
export class DatabaseModule {
  static forRoot(url: string): DynamicModule {
    return {
      module: DatabaseModule,
      global: true,
      imports: [TypeOrmModule.forRoot({ ...dataSourceOptions(url), retryAttempts: 3, retryDelay: 1000 })],
      providers: [Db],
      exports: [Db],
    };
  }
}
