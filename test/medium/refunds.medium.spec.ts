import type { RequestAuth } from '../../src/common/auth/request-auth';
import { DomainError } from '../../src/common/errors/domain-error';
import { event, MediumContext, startMedium } from '../support/medium';

/**
 * Refund rules against real PostgreSQL, through the services alone: the races that the
 * e2e suites can only try a few times are run here in bulk.
 */
describe('refunds, service tier (docs/refunds.md)', () => {
  let m: MediumContext;
  let auth: RequestAuth;

  beforeAll(async () => {
    m = await startMedium();
    auth = await m.newMerchant();
  });
  afterAll(() => m.close());

  // As a request without an Idempotency-Key calls it: the service opens its own transaction.
  const refund = (orderId: string, amount: number, outRefundNo?: string) =>
    m.refunds.create(auth, { order_id: orderId, amount, out_refund_no: outRefundNo });
  const codeOf = (result: PromiseSettledResult<unknown>) =>
    result.status === 'fulfilled' ? 'created' : ((result.reason as DomainError).code ?? String(result.reason));
  /** The order's amount_refunded next to the sum of its refunds that are not failed. */
  const ledger = async (orderId: string) =>
    (
      await m.database.pool.query(
        `SELECT o.amount_refunded::int AS refunded, o.status,
                (SELECT coalesce(sum(amount), 0)::int FROM refunds r WHERE r.order_id = o.id AND r.status <> 'failed') AS sum
           FROM orders o WHERE o.id = $1`,
        [orderId],
      )
    ).rows[0] as { refunded: number; status: string; sum: number };

  it('never refunds more than the order amount, whatever the concurrency', async () => {
    for (let round = 0; round < 5; round++) {
      const orderId = await m.newPaidOrder(auth, 1000);
      const results = await Promise.allSettled(Array.from({ length: 15 }, () => refund(orderId, 100)));
      const codes = results.map(codeOf);
      expect(codes.filter((code) => code === 'created')).toHaveLength(10);
      // Refused for the amount, or, once all of it is refunded, because the order is no longer paid.
      expect(codes.filter((code) => code === 'refund_amount_exceeded' || code === 'order_not_paid')).toHaveLength(5);
      expect(await ledger(orderId)).toEqual({ refunded: 1000, status: 'refunded', sum: 1000 });
    }
  });

  it('keeps the ledger true when refunds fail while others are being created', async () => {
    for (let round = 0; round < 5; round++) {
      const orderId = await m.newPaidOrder(auth, 1000);
      const pending = await Promise.all([refund(orderId, 300), refund(orderId, 300), refund(orderId, 300)]);
      const failures = pending.map(({ refund: { id } }) =>
        m.settle(event('refund.failed', { refund_id: id, failure_code: 'declined' })),
      );
      const creates = Array.from({ length: 6 }, () => refund(orderId, 200));
      const results = await Promise.allSettled([...failures, ...creates]);
      expect(results.slice(0, 3).map(codeOf)).toEqual(['created', 'created', 'created']);
      expect(
        results
          .slice(3)
          .map(codeOf)
          .every((code) => ['created', 'refund_amount_exceeded', 'order_not_paid'].includes(code)),
      ).toBe(true);
      const after = await ledger(orderId);
      expect(after.refunded).toBe(after.sum);
      expect(after.refunded).toBeLessThanOrEqual(1000);
      // The three failures gave their 900 back: whatever the interleaving, the creates that
      // succeeded are exactly what the ledger holds now.
      const created = results.slice(3).filter((result) => result.status === 'fulfilled').length;
      expect(after.sum).toBe(created * 200);
    }
  });

  it('settles a refund once when its result arrives twice at the same moment', async () => {
    const orderId = await m.newPaidOrder(auth, 500);
    const { refund: created } = await refund(orderId, 500);
    const outcomes = await Promise.all(
      ['refund.failed', 'refund.failed', 'refund.succeeded'].map((type) =>
        m.settle(event(type, { refund_id: created.id })),
      ),
    );
    expect(outcomes.filter((outcome) => outcome.status === 'processed')).toHaveLength(1);
    const after = await ledger(orderId);
    expect(after.refunded).toBe(after.sum);
  });

  it('creates one refund for one out_refund_no raced on two orders', async () => {
    const [first, second] = [await m.newPaidOrder(auth, 500), await m.newPaidOrder(auth, 500)];
    const results = await Promise.all([refund(first, 100, 'RACED_1'), refund(second, 100, 'RACED_1')]);
    expect(results.filter((result) => result.created)).toHaveLength(1);
    expect(results[0].refund.id).toBe(results[1].refund.id);
    const { rows } = await m.database.pool.query(
      `SELECT count(*)::int AS n FROM refunds WHERE out_refund_no = 'RACED_1'`,
    );
    expect(rows[0].n).toBe(1);
  });

  it('refuses a row lock or an event outside a transaction, where it would not hold', async () => {
    const orderId = await m.newPaidOrder(auth, 500);
    await expect(m.orders.close(auth, orderId)).rejects.toMatchObject({ code: 'order_not_closable' });
    await expect(m.ordersRepository.lockInScope(auth, 'id', orderId)).rejects.toThrow(
      'a row lock outside a transaction',
    );
    await expect(
      m.events.record('order.closed', {
        ...auth,
        orderId,
        refundId: null,
        object: {},
        notifyUrl: null,
      }),
    ).rejects.toThrow('recording an event outside a transaction');
    const { rows } = await m.database.pool.query(
      `SELECT count(*)::int AS n FROM events WHERE order_id = $1 AND type = 'order.closed'`,
      [orderId],
    );
    expect(rows[0].n).toBe(0);
  });
});
