import { DATABASE_GAUGE_WAIT_MS, Metrics } from './metrics';

const IDLE_POOL = () => ({ size: 20, total: 0, idle: 0, waiting: 0 });

describe('Metrics', () => {
  const value = (text: string, series: string) => {
    const line = text.split('\n').find((each) => each.startsWith(`${series} `));
    return line === undefined ? undefined : Number(line.slice(series.length + 1));
  };

  it('reads the pool through the function it is given, at each scrape', async () => {
    let stats = { size: 20, total: 3, idle: 1, waiting: 1 };
    const metrics = new Metrics(() => stats);
    const first = await metrics.registry.metrics();
    expect(value(first, 'kukopay_db_pool_size')).toBe(20);
    expect(value(first, 'kukopay_db_pool_total_connections')).toBe(3);
    expect(value(first, 'kukopay_db_pool_idle_connections')).toBe(1);
    expect(value(first, 'kukopay_db_pool_waiting_clients')).toBe(1);
    stats = { size: 20, total: 7, idle: 0, waiting: 0 };
    expect(value(await metrics.registry.metrics(), 'kukopay_db_pool_total_connections')).toBe(7);
  });

  it('shows gauges from a query once registered, reading it once per scrape for all of them', async () => {
    const metrics = new Metrics(IDLE_POOL);
    expect(await metrics.registry.metrics()).not.toContain('kukopay_notifications_pending');
    let reads = 0;
    metrics.gaugesFromQuery(async () => {
      reads += 1;
      return { pending: 3, oldest: reads === 1 ? 42 : 0 };
    }, [
      { name: 'notifications_pending', help: 'pending', pick: (row) => row.pending },
      { name: 'notification_oldest_pending_age_seconds', help: 'oldest', pick: (row) => row.oldest },
    ]);
    metrics.notificationAttempts.inc({ result: 'delivered' }, 2);
    const first = await metrics.registry.metrics();
    expect(value(first, 'kukopay_notifications_pending')).toBe(3);
    expect(value(first, 'kukopay_notification_oldest_pending_age_seconds')).toBe(42);
    expect(value(first, 'kukopay_notification_attempts_total{result="delivered"}')).toBe(2);
    expect(reads).toBe(1);
    const second = await metrics.registry.metrics();
    expect(value(second, 'kukopay_notification_oldest_pending_age_seconds')).toBe(0);
    expect(reads).toBe(2);
  });

  it('waits at most DATABASE_GAUGE_WAIT_MS for a query, keeps the last values, and joins one still running', async () => {
    jest.useFakeTimers();
    try {
      const metrics = new Metrics(IDLE_POOL);
      const answers: ((row: { pending: number }) => void)[] = [];
      metrics.gaugesFromQuery(
        () => new Promise<{ pending: number }>((resolve) => answers.push(resolve)),
        [{ name: 'notifications_pending', help: 'pending', pick: (row) => row.pending }],
      );
      const scrape = async () => {
        const text = metrics.registry.metrics();
        await jest.advanceTimersByTimeAsync(DATABASE_GAUGE_WAIT_MS);
        return text;
      };
      const first = scrape();
      answers[0]!({ pending: 5 });
      expect(value(await first, 'kukopay_notifications_pending')).toBe(5);
      // The database stops answering: each scrape still ends, with the last value, and asks
      // the database once, not once per scrape.
      expect(value(await scrape(), 'kukopay_notifications_pending')).toBe(5);
      expect(value(await scrape(), 'kukopay_notifications_pending')).toBe(5);
      expect(answers).toHaveLength(2);
      answers[1]!({ pending: 7 });
      await jest.advanceTimersByTimeAsync(0);
      const after = metrics.registry.metrics();
      answers[2]!({ pending: 8 });
      expect(value(await after, 'kukopay_notifications_pending')).toBe(8);
    } finally {
      jest.useRealTimers();
    }
  });

  it('exports the series of bounded label sets at 0 before anything happened', async () => {
    const text = await new Metrics(IDLE_POOL).registry.metrics();
    for (const series of [
      'kukopay_idempotency_outcomes_total{outcome="executed"}',
      'kukopay_idempotency_outcomes_total{outcome="unreadable"}',
      'kukopay_auth_failures_total{credential="admin_token",status="429"}',
      'kukopay_idempotency_purge_runs_total{result="stopped_early"}',
      'kukopay_notification_attempts_total{result="delivered"}',
      'kukopay_notification_attempts_total{result="failed"}',
    ]) {
      expect(value(text, series)).toBe(0);
    }
  });

  it('records purge runs by result', async () => {
    const metrics = new Metrics(IDLE_POOL);
    metrics.recordPurge({ deleted: 10, skipped: false, finished: true });
    metrics.recordPurge({ deleted: 0, skipped: true, finished: false });
    metrics.recordPurgeFailure();
    const text = await metrics.registry.metrics();
    expect(value(text, 'kukopay_idempotency_purge_deleted_rows_total')).toBe(10);
    for (const result of ['finished', 'skipped', 'failed']) {
      expect(value(text, `kukopay_idempotency_purge_runs_total{result="${result}"}`)).toBe(1);
    }
  });
});
