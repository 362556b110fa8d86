import { randomUUID } from 'node:crypto';
import { KukoPayConnectionError } from '@kukopay/node';
import { orderBody } from '../support/factories';
import { injectFault } from '../support/faults';
import { deliverEvent, paymentSucceeded } from '../support/webhooks';
import { LossyProxy, startLossyProxy } from './support/lossy-proxy';
import { SdkServer, startSdkServer } from './support/sdk-server';

/**
 * The seed's scenario for real: the server commits, the answer never reaches the client,
 * and the client's retry (one key, the same body bytes) must get the stored answer, not a
 * second order or refund. Set KUKO_SDK_TRACE=1 to print each attempt as the proxy saw it.
 */
describe('@kukopay/node when answers are lost (real server behind a lossy proxy)', () => {
  let s: SdkServer;
  let proxy: LossyProxy | undefined;

  beforeAll(async () => {
    s = await startSdkServer();
  });
  afterEach(async () => {
    if (process.env.KUKO_SDK_TRACE && proxy) trace(expect.getState().currentTestName ?? '', proxy);
    await proxy?.close();
    proxy = undefined;
  });
  afterAll(() => s.close());

  const count = async (sql: string, params: unknown[]) => Number((await s.t.db.pool.query(sql, params)).rows[0].n);
  const ordersWith = (outTradeNo: string) =>
    count('SELECT count(*) AS n FROM orders WHERE merchant_id = $1 AND out_trade_no = $2', [s.merchant.id, outTradeNo]);
  const order = () => ({
    out_trade_no: String(orderBody().out_trade_no),
    amount: 2990,
    currency: 'USD',
    subject: 'Annual plan',
  });

  async function paidOrder(amount = 5000) {
    const created = await s.client().orders.create({ ...order(), amount });
    const paid = await deliverEvent(s.t, paymentSucceeded(created.id, { amount, currency: 'USD' }));
    expect(paid.body.data).toMatchObject({ status: 'processed' });
    return created;
  }

  /** Every attempt reached the server with one key and the same bytes. */
  function expectOneOperation(p: LossyProxy, attempts: number) {
    expect(p.attempts).toHaveLength(attempts);
    expect(new Set(p.attempts.map((a) => a.idempotencyKey)).size).toBe(1);
    expect(new Set(p.attempts.map((a) => a.body.toString('hex'))).size).toBe(1);
  }

  it('orders.create: 2 answers lost after commit, the 3rd attempt is a replay, and one order exists', async () => {
    proxy = await startLossyProxy(s.url, { answer: (n) => (n <= 2 ? 'drop' : 'forward') });
    const params = order();
    const created = await s.client({ baseUrl: proxy.url }).orders.create(params);

    expect(created).toMatchObject({ object: 'order', out_trade_no: params.out_trade_no, status: 'pending' });
    expect(created.lastResponse).toMatchObject({ status: 201, idempotentReplayed: true, attempts: 3 });
    expect(proxy.attempts.map((a) => [a.upstreamStatus, a.outcome])).toEqual([
      [201, 'dropped'],
      [201, 'dropped'],
      [201, 'answered'],
    ]);
    expectOneOperation(proxy, 3);
    // The replay is the first execution's answer: its request id, not a new one.
    expect(created.lastResponse.requestId).toBe(proxy.attempts[0].upstreamRequestId);
    expect(await ordersWith(params.out_trade_no)).toBe(1);
    const key = proxy.attempts[0].idempotencyKey;
    expect(await count('SELECT count(*) AS n FROM idempotency_keys WHERE key = $1', [key])).toBe(1);
  });

  it('refunds.create without out_refund_no (only the key protects it): 3 answers lost, one refund', async () => {
    const paid = await paidOrder();
    proxy = await startLossyProxy(s.url, { answer: (n) => (n <= 3 ? 'drop' : 'forward') });
    const refund = await s
      .client({
        baseUrl: proxy.url,
        maxRetries: 3,
      })
      .refunds.create({ order_id: paid.id, amount: 700 });

    expect(refund).toMatchObject({
      object: 'refund',
      order_id: paid.id,
      amount: 700,
      out_refund_no: null,
      status: 'pending',
    });
    expect(refund.lastResponse).toMatchObject({ status: 201, idempotentReplayed: true, attempts: 4 });
    expectOneOperation(proxy, 4);
    expect(proxy.attempts.map((a) => a.upstreamStatus)).toEqual([201, 201, 201, 201]);
    expect(await count('SELECT count(*) AS n FROM refunds WHERE order_id = $1', [paid.id])).toBe(1);
    expect((await s.client().orders.retrieve(paid.id)).amount_refunded).toBe(700);
  });

  it('every answer lost: KukoPayConnectionError with the key; a later call with that key gets the refund', async () => {
    const paid = await paidOrder();
    proxy = await startLossyProxy(s.url, { answer: () => 'drop' });
    const error = await s
      .client({ baseUrl: proxy.url, maxRetries: 1 })
      .refunds.create({ order_id: paid.id, amount: 300 })
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(KukoPayConnectionError);
    const { idempotencyKey } = error as KukoPayConnectionError;
    expect(idempotencyKey).toBe(proxy.attempts[0].idempotencyKey);
    expectOneOperation(proxy, 2);

    const later = await s
      .client()
      .refunds.create({ order_id: paid.id, amount: 300 }, { idempotencyKey: idempotencyKey! });
    expect(later.lastResponse).toMatchObject({ status: 201, idempotentReplayed: true, attempts: 1 });
    expect(await count('SELECT count(*) AS n FROM refunds WHERE order_id = $1', [paid.id])).toBe(1);
  });

  it('an answer withheld past timeoutMs: the client abandons the attempt, retries, gets the replay', async () => {
    proxy = await startLossyProxy(s.url, { answer: (n) => (n === 1 ? 'withhold' : 'forward') });
    const params = order();
    const created = await s.client({ baseUrl: proxy.url, timeoutMs: 1000 }).orders.create(params);

    expect(created.lastResponse).toMatchObject({ status: 201, idempotentReplayed: true, attempts: 2 });
    expect(proxy.attempts.map((a) => [a.upstreamStatus, a.outcome])).toEqual([
      [201, 'withheld'],
      [201, 'answered'],
    ]);
    expectOneOperation(proxy, 2);
    expect(await ordersWith(params.out_trade_no)).toBe(1);
  });

  it("409 while the first attempt still runs: the client retries and gets the first one's answer", async () => {
    // The first request blocks inside its transaction (holding its key) on a lock this test holds.
    const removeFault = await injectFault(
      s.t.db.pool,
      'orders',
      'PERFORM pg_advisory_lock(4242); PERFORM pg_advisory_unlock(4242);',
    );
    const holder = await s.t.db.pool.connect();
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    try {
      await holder.query('SELECT pg_advisory_lock(4242)');
      const key = randomUUID();
      const params = order();
      const first = s.client().orders.create(params, { idempotencyKey: key });
      await waitForLockWaiter(s);

      // The second client's first attempt meets the running first request (409); its retry
      // is held at the proxy until the first request has committed.
      proxy = await startLossyProxy(s.url, { beforeForward: (n) => (n >= 2 ? gate : undefined) });
      const second = s.client({ baseUrl: proxy.url }).orders.create(params, { idempotencyKey: key });
      await proxy.waitForAttempts(2);
      expect(proxy.attempts[0].upstreamStatus).toBe(409);
      await holder.query('SELECT pg_advisory_unlock(4242)');
      const firstOrder = await first;
      openGate();
      const secondOrder = await second;

      expect(firstOrder.lastResponse).toMatchObject({ status: 201, idempotentReplayed: false, attempts: 1 });
      expect(secondOrder.lastResponse).toMatchObject({ status: 201, idempotentReplayed: true, attempts: 2 });
      expect(secondOrder.id).toBe(firstOrder.id);
      expect(secondOrder.lastResponse.requestId).toBe(firstOrder.lastResponse.requestId);
      expect(proxy.attempts.map((a) => a.upstreamStatus)).toEqual([409, 201]);
      expect(await ordersWith(params.out_trade_no)).toBe(1);
    } finally {
      openGate();
      holder.release();
      await removeFault();
    }
  });
});

/** Waits until a server request is blocked on the test's advisory lock 4242. */
async function waitForLockWaiter(s: SdkServer, timeoutMs = 10000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rowCount } = await s.t.db.pool.query(
      `SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objid = 4242
          AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    );
    if ((rowCount ?? 0) > 0) return;
    if (Date.now() > deadline) throw new Error('the first request never reached the fault');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function trace(name: string, p: LossyProxy): void {
  const lines = p.attempts.map(
    (a) =>
      `  attempt ${a.attempt}: ${a.method} ${a.path} key=${a.idempotencyKey}` +
      ` → server ${a.upstreamStatus} ${a.upstreamRequestId} → ${a.outcome}`,
  );
  process.stdout.write(`${name}\n${lines.join('\n')}\n`);
}
