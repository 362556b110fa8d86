import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';

/**
 * SQL in the request's transaction, when one is open (TransactionHost.tx), else on the
 * pool. Always returns the rows, whatever the statement (TypeORM's plain query() returns
 * [rows, count] for UPDATE and DELETE, and rows otherwise).
 */
@Injectable()
export class Db {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  async rows<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
    const manager = this.txHost.tx;
    if (manager.queryRunner) return (await manager.queryRunner.query(sql, params, true)).records;
    const runner = manager.connection.createQueryRunner();
    try {
      return (await runner.query(sql, params, true)).records;
    } finally {
      await runner.release();
    }
  }

  async one<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T | null> {
    return (await this.rows<T>(sql, params))[0] ?? null;
  }

  /** Runs fn in one transaction, or joins the one already open. */
  transaction<T>(fn: () => Promise<T>): Promise<T> {
    return this.txHost.withTransaction(fn);
  }
}
