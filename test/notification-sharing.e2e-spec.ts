import { createMerchant, createPaidOrder } from './support/factories';
import { delta, scrape } from './support/metrics';
import { NOTIFY_ENV } from './support/notifications';
import { startReceiver, waitFor } from './support/receiver';
import { startTestApp, TestApp } from './support/test-app';

const TIMEOUT_MS = 5000;

describe('notification workers shared between merchants (docs/notifications.md, "Sharing the workers")', () => {
  let t: TestApp;

  beforeAll(async () => {
    // Three workers: one merchant may hold two, the third is kept for the others.
    t = await startTestApp({
      ...NOTIFY_ENV,
      NOTIFY_WORKER_CONCURRENCY: '3',
      NOTIFY_RETRY_SCHEDULE: '0',
      NOTIFY_TIMEOUT_MS: String(TIMEOUT_MS),
    });
  });
  afterAll(() => t.close());

  it("delivers another merchant's notification while one merchant's endpoint hangs, and loses none of the first's", async () => {
    const hanging = await startReceiver(() => undefined);
    const answering = await startReceiver();
    try {
      const slow = await createMerchant(t, 'Hangs');
      const other = await createMerchant(t, 'Answers');
      const before = await scrape(t);
      for (let i = 0; i < 4; i++) await createPaidOrder(t, slow.testKey, { notify_url: hanging.url });
      const order = await createPaidOrder(t, other.testKey, { notify_url: answering.url });

      await waitFor(t.db.pool, `SELECT delivery_status = 'delivered' AS done FROM events WHERE order_id = $1`, [
        order.id,
      ]);
      // Delivered while the hanging endpoint still held its first attempts: before any of
      // them timed out (without the share, every worker waited on it for the timeout).
      const recorded = await t.db.pool.query(
        `SELECT count(*)::int AS n FROM notification_attempts a JOIN events e ON e.id = a.event_id
          WHERE e.merchant_id = $1`,
        [slow.id],
      );
      expect(recorded.rows[0].n).toBe(0);
      expect(hanging.received.length).toBeGreaterThanOrEqual(1);
      expect(hanging.received.length).toBeLessThanOrEqual(2);
      expect(answering.received).toHaveLength(1);

      // The ones put back are attempted once their merchant has a worker again: each of
      // the four exactly once (a one-slot schedule), none lost.
      await waitFor(
        t.db.pool,
        `SELECT bool_and(delivery_status = 'failed') AND count(*) = 4 AS done FROM events WHERE merchant_id = $1`,
        [slow.id],
      );
      const { rows } = await t.db.pool.query(
        `SELECT e.id, count(a.id)::int AS attempts, min(a.error) AS error
           FROM events e JOIN notification_attempts a ON a.event_id = e.id
          WHERE e.merchant_id = $1 GROUP BY e.id`,
        [slow.id],
      );
      expect(rows).toHaveLength(4);
      expect(rows.every((row) => row.attempts === 1 && row.error === 'timeout')).toBe(true);
      expect(new Set(hanging.received.map((r) => r.headers['webhook-id'])).size).toBe(4);
      expect(hanging.received).toHaveLength(4);
      expect(delta(before, await scrape(t), 'kukopay_notifications_put_back_total')).toBeGreaterThan(0);
    } finally {
      await hanging.close();
      await answering.close();
    }
  }, 60_000);
});
