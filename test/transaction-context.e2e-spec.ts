import { randomUUID } from 'node:crypto';
import { createMerchant, orderBody, TestMerchant } from './support/factories';
import { ServerProcess, startServerProcess } from './support/server-process';
import { startTestApp, TestApp } from './support/test-app';

interface Answer {
  status: number;
  replayed: boolean;
  orderId: string;
}

/**
 * Db enables its AsyncLocalStorage only while a transaction is open (docs/decisions.md,
 * "Our own transaction context instead of nestjs-cls"). Jest keeps Node's async hooks on
 * for its own purposes, so the storage really going off and on again happens only in a
 * server process of its own. There, keyed creates (one transaction each) overlap unkeyed
 * ones (none) and replays, transactions end while others are halfway, and every keyed
 * create must still commit its order and its stored answer together.
 */
describe('the transaction context, in a server process of its own', () => {
  let t: TestApp;
  let merchant: TestMerchant;
  let server: ServerProcess;

  beforeAll(async () => {
    t = await startTestApp();
    merchant = await createMerchant(t);
    server = await startServerProcess({ DATABASE_URL: t.db.url });
  });
  afterAll(async () => {
    await server?.kill('SIGTERM');
    await t?.close();
  });

  const create = async (body: Record<string, unknown>, key?: string): Promise<Answer> => {
    const response = await fetch(`${server.url}/v1/orders`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': merchant.testKey,
        ...(key ? { 'idempotency-key': key } : {}),
      },
      body: JSON.stringify(body),
    });
    const json = (await response.json()) as { data?: { id: string } };
    return {
      status: response.status,
      replayed: response.headers.get('idempotent-replayed') === 'true',
      orderId: json.data?.id ?? '',
    };
  };

  it('commits every keyed create with its stored answer while unkeyed creates and replays run beside it', async () => {
    let previous: { key: string; body: Record<string, unknown>; orderId: string }[] = [];
    for (let round = 0; round < 5; round++) {
      const keyed = Array.from({ length: 20 }, () => ({ key: randomUUID(), body: orderBody() }));
      const [keyedAnswers, unkeyedAnswers, replays] = await Promise.all([
        Promise.all(keyed.map(({ key, body }) => create(body, key))),
        Promise.all(Array.from({ length: 20 }, () => create(orderBody()))),
        Promise.all(previous.map(({ key, body }) => create(body, key))),
      ]);

      expect([...keyedAnswers, ...unkeyedAnswers].map((answer) => answer.status)).toEqual(Array(40).fill(201));
      expect(replays.map((answer) => [answer.status, answer.replayed, answer.orderId])).toEqual(
        previous.map(({ orderId }) => [201, true, orderId]),
      );
      // Each keyed create's answer was stored in the commit that created its order.
      const { rows } = await t.db.pool.query<{ key: string; order_id: string }>(
        `SELECT k.key, o.id AS order_id
           FROM idempotency_keys k JOIN orders o ON o.id = (k.response_body::jsonb -> 'data' ->> 'id')
          WHERE k.key = ANY($1)`,
        [keyed.map(({ key }) => key)],
      );
      const stored = new Map(rows.map((row) => [row.key, row.order_id]));
      expect(keyed.map(({ key }) => stored.get(key))).toEqual(keyedAnswers.map((answer) => answer.orderId));

      previous = keyed.map(({ key, body }, i) => ({ key, body, orderId: keyedAnswers[i].orderId }));
    }
  });
});
