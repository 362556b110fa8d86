import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source-options';
import { BatchedStatement, Db } from '../../src/database/db';
import { runMigrations } from '../../src/database/migrations';
import { createTestDatabase, databaseEnv, TestDatabase } from '../support/database';

/**
 * Behind a transaction pooler that keeps prepared statements
 * (DATABASE_POOL_PREPARED_STATEMENTS=on), Db writes BEGIN, the settings and prepared
 * statements to the connection in pg's pipeline mode. That needs no pooler to be checked:
 * in every run it goes straight to the test server, except in a run through a PgBouncer
 * that keeps prepared statements (1.21 and later), where it goes through that.
 */
describe('Db with statements prepared behind a transaction pooler', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let db: Db;

  const SUM: BatchedStatement = { name: 'kuko_test_sum', types: ['int', 'int'], text: 'SELECT $1 + $2 AS sum' };
  const NOTE: BatchedStatement = {
    name: 'kuko_test_note',
    types: ['text'],
    text: 'INSERT INTO pipelined_notes (note) VALUES ($1)',
  };
  const DIVIDE: BatchedStatement = { name: 'kuko_test_divide', types: ['int'], text: 'SELECT 1 / $1 AS quotient' };

  beforeAll(async () => {
    database = await createTestDatabase();
    const env = databaseEnv(database.url);
    const direct = env.DATABASE_DIRECT_URL ?? database.url;
    const url = env.DATABASE_POOL_PREPARED_STATEMENTS === 'on' ? database.url : direct;
    await runMigrations(direct);
    await database.pool.query('CREATE TABLE pipelined_notes (note text NOT NULL)');
    // One connection, so that what one statement leaves on it is seen by the next.
    const options = dataSourceOptions(url, { mode: 'transaction', pipeline: true, max: 1 });
    dataSource = await new DataSource(options).initialize();
    db = new Db(dataSource, {
      mode: 'transaction',
      preparedStatements: true,
      poolSize: 2,
      settings: { lock_timeout: '300ms', statement_timeout: '60s', idle_in_transaction_session_timeout: '60s' },
    });
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  const viaPooler = () => process.env.KUKO_TEST_POOLER_PREPARED === 'on';
  /** The server's names of the statements prepared on this connection: PgBouncer renames them. */
  const preparedNames = async () =>
    (await db.rows<{ name: string }>('SELECT name FROM pg_prepared_statements ORDER BY name')).map((row) => row.name);
  const preparedAs = (name: string) => (viaPooler() ? expect.stringMatching(/^PGBOUNCER_/) : name);

  it('sends the calls of BEGIN and COMMIT as prepared statements, and commits what they wrote', async () => {
    const inside = await db.transaction(
      'test',
      async ([sum]) => {
        db.beforeCommit(db.call(NOTE, ['written with COMMIT']));
        return { sum, prepared: await preparedNames() };
      },
      [db.call(SUM, [1, 2]), 'SAVEPOINT pipelined'],
    );
    expect(inside.sum).toEqual([{ sum: 3 }]);
    expect(inside.prepared).toEqual(expect.arrayContaining([preparedAs(SUM.name)]));
    const { rows } = await database.pool.query('SELECT note FROM pipelined_notes');
    expect(rows).toEqual([{ note: 'written with COMMIT' }]);
    expect(await preparedNames()).toEqual(expect.arrayContaining([preparedAs(NOTE.name)]));
  });

  it('runs a statement outside any transaction prepared and under the settings, which end with it', async () => {
    const probe = { name: 'kuko_test_setting', text: 'SELECT current_setting($1) AS value' };
    expect(await db.one(probe, ['lock_timeout'])).toEqual({ value: '300ms' });
    expect(await preparedNames()).toEqual(expect.arrayContaining([preparedAs(probe.name)]));
    // The same connection, outside the statement's own transaction: the value it started
    // with again (the server's, or the database's where the run sets the limits there).
    const connection = await dataSource.createQueryRunner();
    try {
      expect(
        await connection.query(`SELECT setting = reset_val AS started FROM pg_settings WHERE name = 'lock_timeout'`),
      ).toEqual([{ started: true }]);
    } finally {
      await connection.release();
    }
  });

  it("fails with the failing statement's own error, not the aborted transaction's, and the connection goes on", async () => {
    await expect(
      db.transaction('test', async () => 'not reached', [db.call(DIVIDE, [0]), 'SAVEPOINT pipelined']),
    ).rejects.toMatchObject({ code: '22012' });
    await expect(db.one('SELECT 1 / $1::int AS quotient', [0])).rejects.toMatchObject({ code: '22012' });
    expect(await db.one('SELECT 1 / $1::int AS quotient', [1])).toEqual({ quotient: 1 });
    expect(await db.transaction('test', async ([rows]) => rows, [db.call(DIVIDE, [1])])).toEqual([{ quotient: 1 }]);
  });

  it('can use a name again whose first Parse was refused (behind PgBouncer, which kept the name)', async () => {
    const fresh: BatchedStatement = { name: 'kuko_test_fresh', types: ['int'], text: 'SELECT $1 AS fresh' };
    // DIVIDE fails; the fresh statement's first Parse comes after it in the same
    // transaction, so PostgreSQL refuses it as part of an aborted transaction.
    await expect(
      db.transaction('test', async () => 'not reached', [db.call(DIVIDE, [0]), db.call(fresh, [1])]),
    ).rejects.toMatchObject({ code: '22012' });
    expect(await db.transaction('test', async ([rows]) => rows, [db.call(fresh, [7])])).toEqual([{ fresh: 7 }]);
    const named = { name: 'kuko_test_fresh_outside', text: 'SELECT $1::int AS fresh' };
    await expect(
      db.transaction('test', async () => {
        await db.one('SELECT 1 / 0').catch(() => undefined);
        return db.one(named, [1]);
      }),
    ).rejects.toMatchObject({ code: '25P02' });
    expect(await db.one(named, [8])).toEqual({ fresh: 8 });
  });

  it('keeps the connection of a transaction that failed, where no PREPARE was sent with it', async () => {
    const backend = async () => (await db.one<{ pid: number }>('SELECT pg_backend_pid() AS pid'))!.pid;
    const before = await backend();
    const refused = db.transaction(
      'test',
      async () => {
        throw new Error('refused by the handler');
      },
      [db.call(SUM, [1, 1])],
    );
    await expect(refused).rejects.toThrow('refused by the handler');
    // Straight to the server, the pool's one connection is the same backend as before;
    // through PgBouncer any server connection may answer.
    if (!viaPooler()) expect(await backend()).toBe(before);
  });

  it('gives up on a lock outside any transaction after lock_timeout, and stores nothing', async () => {
    const holder = await database.pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE pipelined_notes IN ACCESS EXCLUSIVE MODE');
      await expect(db.execute('INSERT INTO pipelined_notes (note) VALUES ($1)', ['blocked'])).rejects.toMatchObject({
        code: '55P03',
      });
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
    const { rows } = await database.pool.query(`SELECT count(*)::int AS n FROM pipelined_notes WHERE note = 'blocked'`);
    expect(rows).toEqual([{ n: 0 }]);
  });
});
