/**
 * SQL for the services, in the request's one transaction when one is open.
 *
 * Services call rows()/one() and never see a connection: inside transaction() the
 * statements go to that transaction's connection (found through AsyncLocalStorage),
 * outside it to the pool. Statements known when the transaction opens, or due just
 * before it commits, travel in the same round trip as BEGIN and COMMIT (one simple-query
 * message), which is where a keyed write saves most of its time.
 */
import { Injectable } from '@nestjs/common';
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Pool, PoolClient, QueryResult } from 'pg';
import { DataSource } from 'typeorm';

/** A statement that pg prepares once per connection (plan cache), then executes by name. */
export interface NamedStatement {
  name: string;
  text: string;
}

interface OpenTransaction {
  client: PoolClient;
  /** Statements sent with COMMIT; a failing one rolls everything back. */
  closing: string[];
}

@Injectable()
export class Db {
  private readonly current = new AsyncLocalStorage<OpenTransaction>();
  /** PREPARE statements every connection needs before its first opening message. */
  private readonly preparations: string[] = [];
  private readonly prepared = new WeakSet<PoolClient>();

  constructor(private readonly dataSource: DataSource) {}

  /** TypeORM's pg pool: TypeORM owns its life cycle (and runs the migrations). */
  private get pool(): Pool {
    return (this.dataSource.driver as unknown as { master: Pool }).master;
  }

  async rows<T = Record<string, unknown>>(sql: string | NamedStatement, params: unknown[] = []): Promise<T[]> {
    const target = this.current.getStore()?.client ?? this.pool;
    const query = typeof sql === 'string' ? { text: sql, values: params } : { ...sql, values: params };
    return ((await target.query(query)) as QueryResult).rows as T[];
  }

  async one<T = Record<string, unknown>>(sql: string | NamedStatement, params: unknown[] = []): Promise<T | null> {
    return (await this.rows<T>(sql, params))[0] ?? null;
  }

  /**
   * Runs fn in one transaction (joining the open one, if any). `opening` statements are
   * sent with BEGIN, and their rows handed to fn; they take no parameters, so any value
   * in them must be escaped with `literal`.
   */
  async transaction<T>(fn: (opened: unknown[][]) => Promise<T>, opening: string[] = []): Promise<T> {
    if (this.current.getStore()) {
      if (opening.length > 0) throw new Error('a nested transaction cannot send opening statements');
      return fn([]);
    }
    const client = await this.pool.connect();
    const transaction: OpenTransaction = { client, closing: [] };
    let broken: Error | undefined;
    // A connection lost mid-transaction fails the running query; the event must not
    // also crash the process, and the client must not go back to the pool.
    const onError = (error: Error) => (broken = error);
    client.on('error', onError);
    try {
      // A connection's first opening message also PREPAREs what later ones EXECUTE.
      const prepare = opening.length > 0 && !this.prepared.has(client) ? this.preparations : [];
      const opened = await simpleQuery(client, [...prepare, 'BEGIN', ...opening]);
      if (prepare.length > 0) this.prepared.add(client);
      const result = await this.current.run(transaction, () => fn(opened.slice(prepare.length + 1)));
      await simpleQuery(client, [...transaction.closing, 'COMMIT']);
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: Error) => (broken = rollbackError));
      // PREPAREs survive a rollback, but this client was not marked as prepared: the next
      // opening would PREPARE again and fail. Such a client is discarded instead.
      if (!this.prepared.has(client) && opening.length > 0) broken ??= error as Error;
      throw error;
    } finally {
      client.removeListener('error', onError);
      // A connection that broke or could not even roll back is discarded, not reused.
      client.release(broken);
    }
  }

  /**
   * Registers PREPARE statements, so that opening and closing statements can EXECUTE a
   * cached plan instead of being parsed and planned on every request.
   */
  prepareOnEveryConnection(statements: readonly string[]): void {
    this.preparations.push(...statements);
  }

  /** Queues statements (escaped, without parameters) to run just before COMMIT. */
  beforeCommit(...statements: string[]): void {
    const transaction = this.current.getStore();
    if (!transaction) throw new Error('beforeCommit() outside a transaction');
    transaction.closing.push(...statements);
  }
}

/** Several statements in one simple-query message: one round trip, rows per statement. */
async function simpleQuery(client: PoolClient, statements: string[]): Promise<unknown[][]> {
  const result = (await client.query(statements.join(';\n'))) as unknown as QueryResult | QueryResult[];
  return (Array.isArray(result) ? result : [result]).map((each) => each.rows);
}
