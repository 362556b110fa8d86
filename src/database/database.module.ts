import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule, getDataSourceToken } from '@nestjs/typeorm';
import { ClsModule } from 'nestjs-cls';
import { ClsPluginTransactional } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { dataSourceOptions, PoolOptions } from './data-source-options';
import { Db } from './db';

/**
 * The TypeORM data source (migrations run at start-up) and the transaction host that
 * lets services join the request's one transaction (TransactionHost.tx) without passing
 * managers around.
 */
@Module({})
export class DatabaseModule {
  static forRoot(url: string, pool: PoolOptions = {}): DynamicModule {
    return {
      module: DatabaseModule,
      global: true,
      providers: [Db],
      exports: [Db],
      imports: [
        TypeOrmModule.forRoot({ ...dataSourceOptions(url, pool), retryAttempts: 3, retryDelay: 1000 }),
        ClsModule.forRoot({
          global: true,
          plugins: [
            new ClsPluginTransactional({
              imports: [TypeOrmModule],
              adapter: new TransactionalAdapterTypeOrm({ dataSourceToken: getDataSourceToken() }),
            }),
          ],
        }),
      ],
    };
  }
}
