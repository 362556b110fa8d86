/**
 * The one path to the database: repositories, the purge and the health check all go
 * through Db, in the request's one transaction when one is open.
 *
 * Each connection is taken through TypeORM's public API: `dataSource.createQueryRunner()`,
 * `queryRunner.connect()` (which hands over the pg client), `queryRunner.release()`. Inside
 * transaction() the statements go to that transaction's runner (found through
 * AsyncLocalStorage), so the idempotency interceptor and the services share one
 * transaction without passing it around. Statements known when the transaction opens, or
 * due just before it commits, travel in the same round trip as BEGIN and COMMIT (one
 * simple-query message), which is where a keyed write saves most of its time
 * (docs/decisions.md).
 */
import { Injectable } from '@nestjs/common';
import { AsyncLocalStorage } from 'node:async_hooks';
import type { PoolClient, QueryResult } from 'pg';
import { DataSource } from 'typeorm';

/** A statement that pg prepares once per connection (plan cache), then executes by name. */
export interface NamedStatement {
  name: string;
  text: string;
}

export type Sql = string | NamedStatement;

/** What runs on one connection: a transaction, or a session such as the purge's. */
export interface Connection {
  rows<T = Record<string, unknown>>(sql: Sql, params?: unknown[]): Promise<T[]>;
  /** Runs a statement and returns how many rows it affected. */
  execute(sql: Sql, params?: unknown[]): Promise<number>;
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

  async rows<T = Record<string, unknown>>(sql: Sql, params: unknown[] = []): Promise<T[]> {
    const open = this.current.getStore();
    if (open) return run<T>(open.client, sql, params);
    return this.withConnection((client) => run<T>(client, sql, params));
  }

  async one<T = Record<string, unknown>>(sql: Sql, params: unknown[] = []): Promise<T | null> {
    return (await this.rows<T>(sql, params))[0] ?? null;
  }

  /**
   * Runs fn in one transaction (joining the open one, if any). `opening` statements are
   * sent with BEGIN, and their rows handed to fn; they take no parameters, so any value
   * in them must be escaped with `literal`.
   */
  async transaction<T>(fn: (openingRows: unknown[][]) => Promise<T>, opening: string[] = []): Promise<T> {
    if (this.current.getStore()) {
      if (opening.length > 0) throw new Error('a nested transaction cannot send opening statements');
      return fn([]);
    }
    return this.withConnection(async (client, discard) => {
      const transaction: OpenTransaction = { client, closing: [] };
      try {
        // A connection's first opening message also PREPAREs what later ones EXECUTE.
        const prepare = opening.length > 0 && !this.prepared.has(client) ? this.preparations : [];
        const opened = await simpleQuery(client, [...prepare, 'BEGIN', ...opening]);
        if (prepare.length > 0) this.prepared.add(client);
        const result = await this.current.run(transaction, () => fn(opened.slice(prepare.length + 1)));
        await simpleQuery(client, [...transaction.closing, 'COMMIT']);
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => discard());
        // PREPAREs survive a rollback, but this client was not marked as prepared: the next
        // opening would PREPARE again and fail. Such a client is discarded instead.
        if (!this.prepared.has(client) && opening.length > 0) discard();
        throw error;
      }
    });
  }

  /**
   * One connection for the length of fn, outside any request transaction: for work that
   * needs a session of its own (the purge's lock, statements in autocommit).
   */
  session<T>(fn: (connection: Connection) => Promise<T>, options: { discardIf?: () => boolean } = {}): Promise<T> {
    return this.withConnection(async (client, discard) => {
      try {
        return await fn({
          rows: (sql, params = []) => run(client, sql, params),
          execute: async (sql, params = []) => (await client.query(toQuery(sql, params))).rowCount ?? 0,
        });
      } finally {
        if (options.discardIf?.()) discard();
      }
    });
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

  /**
   * Borrows a connection through a TypeORM query runner and always gives it back. A
   * connection that broke, or that fn asked to discard, is ended first, so the pool drops
   * it instead of lending it again (pg-pool never reuses an ending client).
   */
  private async withConnection<T>(fn: (client: PoolClient, discard: () => void) => Promise<T>): Promise<T> {
    const runner = this.dataSource.createQueryRunner();
    const client = (await runner.connect()) as PoolClient;
    let discarded = false;
    const discard = () => {
      if (discarded) return;
      discarded = true;
      client.end().catch(() => undefined);
    };
    // A connection lost mid-use fails the running query; its 'error' event must not also
    // crash the process (TypeORM's runner listens to it as well and releases the client).
    const onError = () => discard();
    client.on('error', onError);
    try {
      return await fn(client, discard);
    } finally {
      client.removeListener('error', onError);
      await runner.release();
    }
  }
}

async function run<T>(client: PoolClient, sql: Sql, params: unknown[]): Promise<T[]> {
  return ((await client.query(toQuery(sql, params))) as QueryResult).rows as T[];
}

function toQuery(sql: Sql, params: unknown[]) {
  return typeof sql === 'string' ? { text: sql, values: params } : { ...sql, values: params };
}

/** Several statements in one simple-query message: one round trip, rows per statement. */
async function simpleQuery(client: PoolClient, statements: string[]): Promise<unknown[][]> {
  const result = (await client.query(statements.join(';\n'))) as unknown as QueryResult | QueryResult[];
  return (Array.isArray(result) ? result : [result]).map((each) => each.rows);
}
