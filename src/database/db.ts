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
 * simple-query message, or one pipeline behind a pooler that keeps prepared statements),
 * which is where a keyed write saves most of its time (docs/decisions.md).
 */
import { Inject, Injectable } from '@nestjs/common';
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import type { PoolClient, QueryConfig, QueryResult } from 'pg';
import { DataSource } from 'typeorm';
import type { PoolMode } from '../config/app-config';
import { ACQUIRE_TIMEOUT_MS, SESSION_SETTINGS } from './data-source-options';
import { inlineStatement } from './inline-statement';
import { literal } from './literal';
import { DatabaseBusyError, isClientTimeout, isReadOnly, isStalePlan } from './pg-errors';
import { SharedSlots, SlotWaitHooks } from './shared-slots';
import { Slots } from './slots';

/** A statement that pg prepares once per connection (plan cache), then executes by name. */
export interface NamedStatement {
  name: string;
  text: string;
}

export type Sql = string | NamedStatement;

/**
 * A statement that shares a round trip with BEGIN or COMMIT (see `Call`): PREPAREd once
 * per connection and EXECUTEd with literals in the same simple-query message; behind a
 * transaction pooler that keeps no prepared statements, sent inline with the same
 * literals; behind one that keeps protocol-level prepared statements, sent as a pg named
 * statement with parameters, written to the connection together with BEGIN or COMMIT.
 */
export interface BatchedStatement {
  name: string;
  /** Parameter types, e.g. ['text', 'int']. */
  types: string[];
  /** The statement over $1 … $n. */
  text: string;
}

export type Literal = string | number | Buffer;

/** A registered statement with its values, to be sent with BEGIN or COMMIT (`Db.call`). */
export interface Call {
  statement: BatchedStatement;
  values: readonly Literal[];
}

/** One statement of an opening or closing message: plain SQL, or a call. */
export type Batched = string | Call;

export interface DbOptions {
  mode: PoolMode;
  /**
   * Behind a transaction pooler, the settings every statement runs under (startup
   * options do not get through it); SESSION_SETTINGS when not given.
   */
  settings?: Readonly<Record<string, string>>;
  /**
   * Behind a transaction pooler: the role or database already sets `settings` on every
   * server connection (checked at start-up, database-setup.ts), so none is sent.
   */
  settingsOnRole?: boolean;
  /**
   * Behind a transaction pooler: whether it keeps protocol-level prepared statements
   * (PgBouncer 1.21 and later, max_prepared_statements above 0). Then statements are
   * prepared there too, and the pool's connections run in pg's pipeline mode
   * (data-source-options.ts), so that BEGIN, the settings and a prepared statement still
   * travel in one round trip.
   */
  preparedStatements?: boolean;
  /** Connections of the pool; a quarter of them are kept free of transactions for reads. */
  poolSize: number;
}

export const DB_OPTIONS = Symbol('DB_OPTIONS');

/**
 * What Db sees of its pool. pg-pool's own counters are reachable only through TypeORM's
 * private driver fields, so Db counts the connections it has been lent and still open.
 */
export interface PoolStats {
  /** The most connections the pool may open. */
  size: number;
  /** Connections open now, lent or idle. */
  total: number;
  /** Open connections lent to nobody. */
  idle: number;
  /** Requests waiting for a connection or a write slot. */
  waiting: number;
}

/** What runs on one connection: a transaction, or a session such as the purge's. */
export interface Connection {
  rows<T = Record<string, unknown>>(sql: Sql, params?: unknown[]): Promise<T[]>;
  /** Runs a statement and returns how many rows it affected. */
  execute(sql: Sql, params?: unknown[]): Promise<number>;
}

interface OpenTransaction {
  client: PoolClient;
  /** Statements sent with COMMIT; a failing one rolls everything back. */
  closing: Batched[];
}

@Injectable()
export class Db implements Connection {
  private readonly current = new AsyncLocalStorage<OpenTransaction>();
  /** Transactions whose fn is running: the storage is enabled only while there are any. */
  private transactionsInContext = 0;
  /** Statements every connection PREPAREs before its first opening message, by name. */
  private readonly preparations = new Map<string, BatchedStatement>();
  /** The plan generation (see `fresh`) at which each connection PREPAREd them. */
  private readonly prepared = new WeakMap<PoolClient, number>();
  /**
   * Bumped on every refusal of a cached plan whose result type a schema change altered
   * ("cached plan must not change result type"). From then on every prepared statement
   * goes under a new name and text, so that each connection, and a pooler that keeps
   * statements by their text, plans it afresh (see `fresh`). A bump costs only a parse
   * per statement and connection, so concurrent refusals each bump rather than guess
   * which generation the failing statement used.
   */
  private planGeneration = 0;
  /** Marks this process's texts apart from another instance's of the same generation. */
  private readonly planToken = randomBytes(4).toString('hex');
  /** The copies `fresh` made, per statement and generation. */
  private readonly freshStatements = new WeakMap<NamedStatement, Map<number, NamedStatement>>();
  /**
   * Pipelined clients on which a named statement failed. PgBouncer records a statement's
   * name when it relays its Parse, and keeps the record when PostgreSQL refuses the Parse
   * (a lock_timeout while parsing, a transaction already aborted); pg forgets it and
   * would send the Parse again under the same name, which PgBouncer answers by closing
   * the connection. Such a client is discarded when it is given back.
   */
  private readonly namesInDoubt = new WeakSet<PoolClient>();
  /**
   * Transactions and writes that may wait on a lock (write()) may hold at most three
   * quarters of the connections at once, so that requests queued on a hot row can never
   * take those that reads need; the last third of those is kept for tenants holding none,
   * so that busy tenants never take all that other tenants' writes need either
   * (docs/operations.md, "One hot order").
   */
  private readonly writeSlots: Slots;
  /** Behind a transaction pooler, the tenant's share held across all instances too. */
  private readonly sharedSlots: SharedSlots;
  /**
   * Behind a transaction pooler, where startup options are refused, the settings go with
   * every BEGIN, and with every statement outside a transaction (see `autocommit`);
   * none where the role sets them (DbOptions.settingsOnRole).
   */
  private readonly settingsPerTransaction: string[];
  readonly mode: PoolMode;
  /** Behind a transaction pooler that keeps prepared statements (DbOptions.preparedStatements). */
  private readonly pipelined: boolean;
  private readonly size: number;
  private lent = 0;
  private waiting = 0;
  /** Connections of the pool seen open: pg-pool opens one only to lend it. */
  private readonly opened = new WeakSet<PoolClient>();
  private open = 0;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(DB_OPTIONS) options: DbOptions,
  ) {
    this.mode = options.mode;
    this.pipelined = options.mode === 'transaction' && options.preparedStatements === true;
    this.size = options.poolSize;
    const slots = Math.max(1, options.poolSize - Math.ceil(options.poolSize / 4));
    this.writeSlots = new Slots(slots, Math.ceil(slots / 3));
    this.sharedSlots = new SharedSlots(options.mode === 'transaction' ? this.writeSlots.tenantShare : 0);
    this.settingsPerTransaction =
      options.mode === 'transaction' && !options.settingsOnRole
        ? [settingStatement(options.settings ?? SESSION_SETTINGS)]
        : [];
  }

  rows<T = Record<string, unknown>>(sql: Sql, params: unknown[] = []): Promise<T[]> {
    const open = this.current.getStore();
    if (open) return this.on(open.client).rows<T>(sql, params);
    return this.replanningOnce(() => this.withConnection((client) => this.autocommit(client).rows<T>(sql, params)));
  }

  execute(sql: Sql, params: unknown[] = []): Promise<number> {
    const open = this.current.getStore();
    if (open) return this.on(open.client).execute(sql, params);
    return this.replanningOnce(() => this.withConnection((client) => this.autocommit(client).execute(sql, params)));
  }

  /**
   * A statement outside any transaction whose cached plan a schema change made stale
   * failed without changing anything: it runs once more, planned afresh. (A transaction
   * that meets one fails; the idempotency interceptor retries it like a serialization
   * failure, anything else answers 503.)
   */
  private async replanningOnce<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (!isStalePlan(error)) throw error;
      return run();
    }
  }

  /**
   * The statement to send now: itself, or, once a schema change made cached plans stale,
   * a copy under a new name with a comment before its text naming the generation and
   * this process. New to every connection and to PgBouncer (which shares server-side
   * statements by their text among all its clients, other instances included), it is
   * planned afresh; the stale plans are never used again.
   */
  private fresh<S extends NamedStatement>(statement: S, generation = this.planGeneration): S {
    if (generation === 0) return statement;
    let copies = this.freshStatements.get(statement);
    if (!copies) this.freshStatements.set(statement, (copies = new Map()));
    let copy = copies.get(generation);
    if (!copy) {
      const name = `${statement.name}_p${generation}`;
      copy = { ...statement, name, text: `/* plan ${generation} of ${this.planToken} */ ${statement.text}` };
      copies.set(generation, copy);
    }
    return copy as S;
  }

  async one<T = Record<string, unknown>>(sql: Sql, params: unknown[] = []): Promise<T | null> {
    return (await this.rows<T>(sql, params))[0] ?? null;
  }

  /**
   * Whether the database takes writes (the readiness check). A connection that says it
   * does not is ended rather than lent again, as after a refused write (withConnection):
   * a session opened while the database was read-only stays read-only.
   */
  takesWrites(): Promise<boolean> {
    return this.withConnection(async (client, discard) => {
      const { rows } = await client.query<{ read_only: boolean }>(
        `SELECT current_setting('transaction_read_only') = 'on' AS read_only`,
      );
      if (rows[0]?.read_only) discard();
      return rows[0]?.read_only !== true;
    });
  }

  /**
   * The first row of a statement that takes row locks (`FOR UPDATE`), which only mean
   * something inside a transaction: in autocommit they would end with the statement.
   */
  async lockOne<T = Record<string, unknown>>(sql: Sql, params: unknown[] = []): Promise<T | null> {
    this.requireTransaction('a row lock');
    return this.one<T>(sql, params);
  }

  /**
   * Refuses work that must commit together with other statements when no transaction is
   * open. Requests without an Idempotency-Key open none of their own (docs/decisions.md,
   * "Transactions are opened by the work that needs one"), so a service whose writes
   * belong together calls transaction(); this catches one that forgot.
   */
  requireTransaction(what: string): void {
    if (!this.current.getStore()) throw new Error(`${what} outside a transaction: wrap the work in Db.transaction()`);
  }

  /**
   * Runs fn in one transaction (joining the open one, if any). `opening` statements are
   * sent with BEGIN, and their rows handed to fn: plain SQL without parameters, or calls
   * (see `call`).
   *
   * `tenant` is whose work it is: the merchant's id, the order a provider's event is
   * about (`order:<id>`), or the name of the service's own work (`webhook:<provider>`,
   * `notifications`, `purge`, `admin`). It decides which share of the write slots the
   * transaction waits for: the process's, and behind a transaction pooler the one shared
   * by all instances (SharedSlots), both within one ACQUIRE_TIMEOUT_MS. `beforeWaiting`
   * is called once before the first wait for either (SlotWaitHooks).
   */
  async transaction<T>(
    tenant: string,
    fn: (openingRows: unknown[][]) => Promise<T>,
    opening: Batched[] = [],
    { beforeWaiting }: { beforeWaiting?: () => Promise<void> } = {},
  ): Promise<T> {
    if (this.current.getStore()) {
      if (opening.length > 0) throw new Error('a nested transaction cannot send opening statements');
      return fn([]);
    }
    const deadline = Date.now() + ACQUIRE_TIMEOUT_MS;
    const hooks = this.waitHooks(beforeWaiting);
    const claim = this.sharedSlots.claim(tenant);
    return this.inSlot(tenant, deadline, hooks, () =>
      this.sharedSlots.run(tenant, deadline, hooks, (refusedRecently) =>
        this.withConnection((client, discard) =>
          // Where the pooler keeps prepared statements, the opening's named statements after
          // a refused claim fail unparsed, which leaves the connection's names in doubt (it
          // is discarded): while the tenant is being refused, the claim goes on its own first.
          this.runTransaction(client, discard, fn, opening, claim, refusedRecently && this.pipelined),
        ),
      ),
    );
  }

  /**
   * A write outside any transaction (an autocommit INSERT) that may wait on a lock: a
   * competitor's uncommitted row with the same unique key makes it wait, holding its
   * connection. It takes a slot of the tenant's share, as a transaction does, so that
   * such waits can never take the connections other tenants need. In a transaction, fn
   * just runs in it.
   */
  write<T>(tenant: string, fn: () => Promise<T>): Promise<T> {
    if (this.current.getStore()) return fn();
    // Per process only, even behind a transaction pooler: it waits only behind another
    // transaction's uncommitted row, and a shared slot's claim (BEGIN, the claim, COMMIT)
    // cost the unkeyed create a quarter of its speed there (docs/decisions.md).
    return this.inSlot(tenant, Date.now() + ACQUIRE_TIMEOUT_MS, this.waitHooks(), fn);
  }

  /** A transaction's or a write's wait hooks: the caller's check, asked once; the waiting gauge. */
  private waitHooks(beforeWaiting?: () => Promise<void>): SlotWaitHooks {
    let asked = false;
    return {
      beforeWaiting: async () => {
        if (asked || !beforeWaiting) return;
        asked = true;
        await beforeWaiting();
      },
      waiting: (delta) => (this.waiting += delta),
    };
  }

  private async inSlot<T>(tenant: string, deadline: number, hooks: SlotWaitHooks, fn: () => Promise<T>): Promise<T> {
    if (!this.writeSlots.canTake(tenant)) await hooks.beforeWaiting();
    hooks.waiting(1);
    try {
      const timeoutMs = Math.max(0, deadline - Date.now());
      await this.writeSlots.acquire(tenant, timeoutMs, () => new DatabaseBusyError('no write slot in time'));
    } finally {
      hooks.waiting(-1);
    }
    try {
      return await fn();
    } finally {
      this.writeSlots.release(tenant);
    }
  }

  private async runTransaction<T>(
    client: PoolClient,
    discard: () => void,
    fn: (openingRows: unknown[][]) => Promise<T>,
    opening: Batched[],
    claim: string[],
    claimAlone: boolean,
  ): Promise<T> {
    const transaction: OpenTransaction = { client, closing: [] };
    let prepare: string[] = [];
    const generation = this.planGeneration;
    try {
      // A connection's first opening message also PREPAREs what later ones EXECUTE.
      if (opening.length > 0 && this.prepared.get(client) !== generation) {
        prepare = [...this.preparations.values()].map((statement) => preparation(this.fresh(statement, generation)));
      }
      const begin = ['BEGIN', ...this.settingsPerTransaction, ...claim];
      const [first, then] = claimAlone ? [[...prepare, ...begin], opening] : [[...prepare, ...begin, ...opening], []];
      let opened = await this.send(client, first, generation);
      if (then.length > 0) opened = [...opened, ...(await this.send(client, then, generation))];
      if (prepare.length > 0) this.prepared.set(client, generation);
      const openingRows = opened.slice(prepare.length + begin.length).map((each) => each.rows);
      const result = await this.inContext(transaction, () => fn(openingRows));
      // EXECUTEs name what this connection PREPAREd, whatever the generation is by now.
      await this.send(client, [...transaction.closing, 'COMMIT'], this.prepared.get(client) ?? generation);
      return result;
    } catch (error) {
      // A statement that got no answer in time leaves the connection waiting for it: a
      // ROLLBACK would queue behind it. withConnection ends the connection, and with it the
      // transaction.
      if (!isClientTimeout(error)) await client.query('ROLLBACK').catch(() => discard());
      // PREPAREs survive a rollback, but this client was not marked as prepared: the next
      // opening would PREPARE again and fail. Such a client is discarded instead. (Only
      // where PREPAREs were sent: a failed transaction alone costs no connection.)
      if (prepare.length > 0 && this.prepared.get(client) !== generation) discard();
      throw error;
    }
  }

  /**
   * Runs fn with the transaction as its async context. AsyncLocalStorage makes Node 20
   * run a promise hook for every promise in the process from its first run() on, for
   * transactions and requests that open none alike (measured: 10–20 % of an unkeyed
   * create's server CPU, docs/decisions.md). So the storage is disabled again whenever
   * the last open transaction ends; the next run() enables it. Disabling only when none
   * is open is safe: only fn's continuations ever read the store, and every one of them
   * has finished before its transaction counts as ended (lint refuses floating promises).
   */
  private async inContext<T>(transaction: OpenTransaction, fn: () => Promise<T>): Promise<T> {
    this.transactionsInContext += 1;
    try {
      return await this.current.run(transaction, fn);
    } finally {
      this.transactionsInContext -= 1;
      if (this.transactionsInContext === 0) this.current.disable();
    }
  }

  /**
   * One connection for the length of fn, outside any request transaction: for work that
   * needs a session of its own (the purge's lock, statements in autocommit).
   */
  session<T>(fn: (connection: Connection) => Promise<T>, options: { discardIf?: () => boolean } = {}): Promise<T> {
    return this.withConnection(async (client, discard) => {
      try {
        return await fn(this.autocommit(client));
      } finally {
        if (options.discardIf?.()) discard();
      }
    });
  }

  poolStats(): PoolStats {
    // A connection that broke while lent has ended before it is given back.
    const idle = Math.max(0, this.open - this.lent);
    return { size: this.size, total: this.open, idle, waiting: this.waiting };
  }

  /**
   * Registers statements that opening and closing messages call (see `call`). With
   * session pooling each connection PREPAREs them once, so a call EXECUTEs a cached plan
   * instead of being parsed and planned on every request.
   */
  prepareOnEveryConnection(statements: readonly BatchedStatement[]): void {
    if (this.mode === 'transaction') return;
    // By name: a second repository on the same Db (the purge CLI's, a test's) adds nothing twice.
    for (const statement of statements) this.preparations.set(statement.name, statement);
  }

  /** A registered statement with its values, as one statement of an opening or closing message. */
  call(statement: BatchedStatement, values: readonly Literal[]): Call {
    return { statement, values };
  }

  /**
   * Statements of an opening or closing message, in one round trip; the results in order,
   * one per statement. Calls go as EXECUTE or inline in one simple query, or, where the
   * pooler keeps prepared statements, as named statements in the same pipeline. An
   * EXECUTE names the statement as this connection PREPAREd it, at `generation`.
   */
  private send(client: PoolClient, statements: Batched[], generation: number): Promise<QueryResult[]> {
    if (this.pipelined) {
      return this.pipeline(
        client,
        statements.map((each) =>
          typeof each === 'string' ? each : namedCall(this.fresh(each.statement), each.values),
        ),
      );
    }
    const texts = statements.map((each) =>
      typeof each === 'string' ? each : invocation(this.fresh(each.statement, generation), each.values, this.mode),
    );
    return simpleQueryResults(client, texts);
  }

  /**
   * Statements on one connection. Behind a transaction pooler that keeps no prepared
   * statements, named statements are sent unnamed.
   */
  private on(client: PoolClient): Connection {
    const query = (sql: Sql, params: unknown[]) => {
      const text =
        typeof sql === 'string' ? sql : this.mode === 'transaction' && !this.pipelined ? sql.text : this.fresh(sql);
      const config = typeof text === 'string' ? { text, values: params } : { ...text, values: params };
      return this.query(client, config);
    };
    return connectionOf(query);
  }

  /**
   * One statement with its values. Where the pooler keeps prepared statements, a named
   * one that fails leaves its client's names in doubt (see `namesInDoubt`).
   */
  private query(client: PoolClient, config: QueryConfig): Promise<QueryResult> {
    const result = client.query(config) as Promise<QueryResult>;
    if (!this.pipelined || config.name === undefined) return result;
    return result.catch((error: unknown) => {
      this.namesInDoubt.add(client);
      throw error;
    });
  }

  /**
   * Statements on a connection outside any transaction. Behind a transaction pooler each
   * one travels in one simple-query message after the settings: PostgreSQL runs such a
   * message as one implicit transaction, so the settings hold for exactly that statement,
   * on whichever server connection the pooler picked, in the same single round trip. Its
   * values are written in as literals (a simple query takes no parameters); nothing is
   * prepared behind a pooler anyway, so PostgreSQL plans it as often either way. Where
   * the role sets the limits, a statement needs nothing around it and goes as it would
   * without a pooler (still prepared where the pooler keeps prepared statements).
   */
  private autocommit(client: PoolClient): Connection {
    if (this.mode !== 'transaction' || this.settingsPerTransaction.length === 0) return this.on(client);
    if (this.pipelined) return this.pipelinedAutocommit(client);
    const query = async (sql: Sql, params: unknown[]) => {
      const statement = inlineStatement(typeof sql === 'string' ? sql : sql.text, params);
      const results = await simpleQueryResults(client, [...this.settingsPerTransaction, statement]);
      return results[results.length - 1];
    };
    return connectionOf(query);
  }

  /**
   * The same where the pooler keeps prepared statements: BEGIN with the settings, the
   * statement (prepared, with parameters) and COMMIT, written to the connection at once.
   * The pooler holds one server connection from BEGIN to COMMIT, so the settings hold for
   * exactly that statement, still in one round trip.
   */
  private pipelinedAutocommit(client: PoolClient): Connection {
    const query = async (sql: Sql, params: unknown[]) => {
      const statement =
        typeof sql === 'string' ? { text: sql, values: params } : { ...this.fresh(sql), values: params };
      const results = await this.pipeline(client, ['BEGIN', ...this.settingsPerTransaction, statement, 'COMMIT']);
      return results[results.length - 2];
    };
    return connectionOf(query);
  }

  /**
   * Statements written to a connection in pg's pipeline mode, without waiting for each
   * answer: one round trip. Consecutive plain statements go as one simple query, each
   * statement with values on its own. Every answer is awaited before the connection is
   * used again; the first failure is the one thrown (those after it only say that the
   * transaction was aborted).
   */
  private async pipeline(client: PoolClient, statements: (string | QueryConfig)[]): Promise<QueryResult[]> {
    const groups: (string[] | QueryConfig)[] = [];
    for (const statement of statements) {
      const last = groups[groups.length - 1];
      if (typeof statement !== 'string') groups.push(statement);
      else if (Array.isArray(last)) last.push(statement);
      else groups.push([statement]);
    }
    const settled = await Promise.allSettled(
      groups.map((group) =>
        Array.isArray(group) ? simpleQueryResults(client, group) : this.query(client, group).then((result) => [result]),
      ),
    );
    const failed = settled.find((each) => each.status === 'rejected');
    if (failed) throw failed.reason;
    return settled.flatMap((each) => (each as PromiseFulfilledResult<QueryResult[]>).value);
  }

  private countOpen(client: PoolClient): void {
    if (this.opened.has(client)) return;
    this.opened.add(client);
    this.open += 1;
    // Ended by us (discard), by pg-pool's idle timeout, or by the server: gone from the pool.
    client.once('end', () => (this.open -= 1));
  }

  /** Queues statements (plain SQL without parameters, or calls) to run just before COMMIT. */
  beforeCommit(...statements: Batched[]): void {
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
    this.waiting += 1;
    let client: PoolClient;
    try {
      client = (await runner.connect()) as PoolClient;
    } finally {
      this.waiting -= 1;
    }
    this.countOpen(client);
    this.lent += 1;
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
    } catch (error) {
      if (isStalePlan(error)) {
        // This connection's plans (and the PREPAREs of its session) are stale.
        this.planGeneration += 1;
        discard();
      }
      // The connection still waits for the statement's answer: it can carry nothing else.
      if (isClientTimeout(error)) discard();
      // A session opened while the database was read-only (a standby, a primary being
      // demoted, default_transaction_read_only) stays so once the database takes writes
      // again: a new one is opened instead. Kept, such sessions refused writes for 35 s.
      if (isReadOnly(error)) discard();
      throw error;
    } finally {
      if (this.namesInDoubt.has(client)) discard();
      client.removeListener('error', onError);
      this.lent -= 1;
      await runner.release();
    }
  }
}

/** The PREPARE of a batched statement, sent once per connection with session pooling. */
export function preparation({ name, types, text }: BatchedStatement): string {
  return `PREPARE ${name}(${types}) AS ${text}`;
}

/** A batched statement with its values: EXECUTE of the prepared plan, or the statement inline. */
export function invocation(statement: BatchedStatement, values: readonly Literal[], mode: PoolMode): string {
  if (mode === 'session') return `EXECUTE ${statement.name}(${values.map((value) => literal(value)).join(', ')})`;
  return inlineStatement(
    statement.text,
    values,
    (value, position) => `${literal(value as Literal)}::${statement.types[position]}`,
  );
}

/** A Connection whose statements all go through one `query`. */
function connectionOf(query: (sql: Sql, params: unknown[]) => Promise<QueryResult>): Connection {
  return {
    rows: async <T>(sql: Sql, params: unknown[] = []) => (await query(sql, params)).rows as T[],
    execute: async (sql: Sql, params: unknown[] = []) => (await query(sql, params)).rowCount ?? 0,
  };
}

/** Several statements in one simple-query message: one round trip, a result per statement. */
async function simpleQueryResults(client: PoolClient, statements: string[]): Promise<QueryResult[]> {
  const result = (await client.query(statements.join(';\n'))) as unknown as QueryResult | QueryResult[];
  return Array.isArray(result) ? result : [result];
}

/** A call as a pg named statement, each parameter cast to its declared type. */
function namedCall(statement: BatchedStatement, values: readonly Literal[]): QueryConfig {
  return { name: statement.name, text: typedText(statement), values: [...values] };
}

const typedTexts = new WeakMap<BatchedStatement, string>();

function typedText(statement: BatchedStatement): string {
  let text = typedTexts.get(statement);
  if (text === undefined) {
    text = inlineStatement(
      statement.text,
      statement.types,
      (_, position) => `$${position + 1}::${statement.types[position]}`,
    );
    typedTexts.set(statement, text);
  }
  return text;
}

/** One statement that sets each of the settings until the end of the transaction. */
export function settingStatement(settings: Readonly<Record<string, string>>): string {
  const calls = Object.entries(settings).map(
    ([name, value]) => `set_config(${literal(name)}, ${literal(value)}, true)`,
  );
  return `SELECT ${calls.join(', ')}`;
}
