/**
 * The SQL of the outbox: events, their delivery state and attempts, and the jobs of the
 * queue (graphile_worker.add_job) that deliver them. The event row is written in the
 * caller's business transaction (it commits with the state change or not at all); the
 * relay adds its first job after commit, marking the row in the same transaction as the
 * job, so each event gets exactly one first job.
 */
import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Db, NamedStatement } from '../database/db';
import { keysetRows, KeysetRows } from '../database/keyset-page';
import { Environment } from '../domain/environment';
import { AttemptRow, EVENT_COLUMNS, EventRow, EventType } from './event';

export const DELIVER_TASK = 'deliver_notification';
/** The queue's own retries of a job whose task threw (e.g. the database was away), not of a merchant's answer. */
export const JOB_MAX_ATTEMPTS = 10;

export interface DeliveryJob {
  event_id: string;
  /** The schedule slot this job attempts; absent for a redelivery. */
  slot?: number;
  /** How many times this attempt was put back (its merchant held its share of the workers). */
  put_back?: number;
  /**
   * The queue's job key the job was added with (absent on jobs added before keys were).
   * Putting an attempt back adds its next job under the same key, which the queue takes
   * from the running job in the same statement; a job that no longer holds its key was
   * handed on that way, and does nothing if it is ever run again (its process died before
   * it ended).
   */
  job_key?: string;
}

/**
 * The key of a scheduled slot's job is the event id followed by this. One definition for
 * the relay's SQL, which keys slot 0 in the database, and for the put-backs and the next
 * slots keyed here: a job keyed otherwise would not take over from the one it follows.
 */
export function slotJobKeySuffix(slot: number): string {
  return `:slot:${slot}`;
}

function slotJobKey(eventId: string, slot: number): string {
  return eventId + slotJobKeySuffix(slot);
}

/** Inserts the event; the relay adds its first job after commit (enqueued = false until then). */
const RECORD_EVENT: NamedStatement = {
  name: 'kuko_record_event',
  text: `INSERT INTO events (id, merchant_id, environment, type, order_id, refund_id, data, notify_url,
                             delivery_status, next_attempt_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8::text,
                 CASE WHEN $8::text IS NULL THEN 'no_destination' ELSE 'pending' END,
                 CASE WHEN $8::text IS NULL THEN NULL ELSE now() + make_interval(secs => $9::float8 / 1000) END)`,
};

/**
 * The relay: claims committed events whose first job is not added yet (SKIP LOCKED, so
 * instances share them), marks them and adds their jobs in one transaction. Many events
 * per transaction, added with one `add_jobs` call: one commit and one queue wake-up for
 * the batch (`add_job` per event costs a wake-up and a task lookup each, docs/benchmarks.md).
 * No row back when there was nothing to add.
 */
const RELAY_EVENTS: NamedStatement = {
  name: 'kuko_relay_events',
  text: `WITH batch AS (
           SELECT id FROM events WHERE NOT enqueued AND delivery_status = 'pending'
            ORDER BY created_at LIMIT $1 FOR UPDATE SKIP LOCKED),
         marked AS (
           UPDATE events e SET enqueued = true FROM batch WHERE e.id = batch.id RETURNING e.id, e.next_attempt_at),
         specs AS (
           SELECT ARRAY(SELECT ROW('${DELIVER_TASK}', json_build_object('event_id', id, 'slot', 0, 'job_key', key),
                                   NULL, next_attempt_at, ${JOB_MAX_ATTEMPTS}, key, NULL, NULL)::graphile_worker.job_spec
                          FROM (SELECT id, next_attempt_at, id || '${slotJobKeySuffix(0)}' AS key FROM marked) AS keyed) AS jobs)
         SELECT (SELECT count(*) FROM graphile_worker.add_jobs(jobs))::int AS n
           FROM specs WHERE cardinality(jobs) > 0`,
};

const EVENT_BY_ID: NamedStatement = {
  name: 'kuko_event_for_delivery',
  text: `SELECT ${EVENT_COLUMNS} FROM events WHERE id = $1`,
};

export interface NewEvent {
  id: string;
  merchantId: string;
  environment: Environment;
  type: EventType;
  orderId: string;
  refundId: string | null;
  object: unknown;
  notifyUrl: string | null;
  firstDelayMs: number;
}

/** When the next slot of the schedule is due: after the commit, and after this attempt. */
export interface NextSlot {
  dueMs: number;
  minGapMs: number;
}

export interface AttemptResult {
  at: Date;
  url: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  responseBody: string | null;
  delivered: boolean;
}

export interface EventFilter {
  type?: EventType;
  orderId?: string;
}

@Injectable()
export class EventsRepository {
  constructor(private readonly db: Db) {}

  /** Records an event in the transaction of the change it reports (the outbox: both or neither). */
  async record(event: NewEvent): Promise<void> {
    this.db.requireTransaction('recording an event');
    await this.db.rows(RECORD_EVENT, [
      event.id,
      event.merchantId,
      event.environment,
      event.type,
      event.orderId,
      event.refundId,
      JSON.stringify({ object: event.object }),
      event.notifyUrl,
      event.firstDelayMs,
    ]);
  }

  /** Adds the first jobs of up to `limit` events; returns how many. */
  async relay(limit: number): Promise<number> {
    return (await this.db.one<{ n: number }>(RELAY_EVENTS, [limit]))?.n ?? 0;
  }

  find(id: string): Promise<EventRow | null> {
    return this.db.one<EventRow>(EVENT_BY_ID, [id]);
  }

  findScoped(merchantId: string, environment: Environment, id: string): Promise<EventRow | null> {
    return this.db.one<EventRow>(
      `SELECT ${EVENT_COLUMNS} FROM events WHERE id = $1 AND merchant_id = $2 AND environment = $3`,
      [id, merchantId, environment],
    );
  }

  /** Newest first; null when the cursor is not one of the merchant's events in this environment. */
  listPage(
    merchantId: string,
    environment: Environment,
    filter: EventFilter,
    limit: number,
    startingAfter?: string,
  ): Promise<KeysetRows<EventRow> | null> {
    const scope = [merchantId, environment];
    // The filter's parameters are numbered after the scope's.
    const filterParams: unknown[] = [];
    const next = (value: unknown) => `$${scope.length + filterParams.push(value)}`;
    const conditions: string[] = [];
    if (filter.type !== undefined) conditions.push(`type = ${next(filter.type)}`);
    if (filter.orderId !== undefined) conditions.push(`order_id = ${next(filter.orderId)}`);
    return keysetRows<EventRow>(this.db, {
      table: 'events',
      columns: EVENT_COLUMNS,
      where: 'merchant_id = $1 AND environment = $2',
      params: scope,
      filter: conditions.length > 0 ? { sql: conditions.join(' AND '), params: filterParams } : undefined,
      limit,
      startingAfter,
    });
  }

  /** How many events wait for delivery, and for how long the oldest has (for /metrics). */
  async backlog(): Promise<{ pending: number; oldestPendingAgeSeconds: number | null }> {
    const row = await this.db.one<{ pending: number; oldest: number | null }>(
      `SELECT count(*)::int AS pending, extract(epoch FROM now() - min(created_at))::float8 AS oldest
         FROM events WHERE delivery_status = 'pending'`,
    );
    return { pending: row?.pending ?? 0, oldestPendingAgeSeconds: row?.oldest ?? null };
  }

  /** Oldest first by start: each is recorded as it ends, so overlapping ones end out of order. */
  attempts(eventId: string): Promise<AttemptRow[]> {
    return this.db.rows<AttemptRow>(
      `SELECT attempted_at, url, kind, status_code, error, duration_ms, response_body
         FROM notification_attempts WHERE event_id = $1 ORDER BY attempted_at, id`,
      [eventId],
    );
  }

  /** A job for one more attempt now, outside the schedule (in the caller's transaction). */
  async enqueueRedelivery(eventId: string): Promise<void> {
    const key = `${eventId}:redelivery:${randomUUID()}`;
    await this.db.rows(
      `SELECT graphile_worker.add_job('${DELIVER_TASK}', json_build_object('event_id', $1::text, 'job_key', $2::text),
                                      job_key => $2, max_attempts => ${JOB_MAX_ATTEMPTS})`,
      [eventId, key],
    );
  }

  /**
   * Puts an attempt back: the same job again, due `delayMs` from now, under the running
   * job's key. graphile-worker's `add_job` gives a key held by a running job to the new
   * job and clears it from the running one in the same statement, so were the process to
   * die before the running job ends, that job, run again after its lease, finds its key
   * gone and does nothing (DeliveryTask.run): the attempt is sent once either way.
   */
  async putBack(job: DeliveryJob, delayMs: number): Promise<void> {
    await this.db.rows(
      `SELECT graphile_worker.add_job('${DELIVER_TASK}', $1::json,
                                      run_at => now() + make_interval(secs => $2::float8 / 1000),
                                      job_key => $3, max_attempts => ${JOB_MAX_ATTEMPTS})`,
      [JSON.stringify(job), delayMs, job.job_key ?? null],
    );
  }

  /**
   * Records a scheduled attempt, and moves the event on: delivered, the next slot's job
   * added (due `next.dueMs` after the event's commit, and no sooner than `next.minGapMs`
   * after this attempt started), or failed after the last.
   * Only the job of the slot that is due may move it (a stale job's attempt is kept, but
   * changes nothing else).
   */
  recordScheduled(event: EventRow, slot: number, result: AttemptResult, next: NextSlot | null): Promise<void> {
    return this.db.transaction('notifications', async () => {
      await this.recordAttempt(event.id, 'scheduled', result);
      const status = result.delivered ? 'delivered' : next === null ? 'failed' : 'pending';
      // `now()` less the attempt's duration is when the attempt started, by the database's clock.
      // `delivery_status || ''`, not `delivery_status`: written plainly, the condition matches
      // the predicate of events_pending_idx, and with statistics taken while few events were
      // pending the planner scans that whole index instead of the primary key (measured: 26k
      // buffer hits and 58 ms per update in a bench run, docs/benchmarks.md).
      const moved = await this.db.one<{ next_attempt_at: Date | null }>(
        `UPDATE events
            SET next_slot = $3, delivery_status = $4,
                delivered_at = CASE WHEN $4 = 'delivered' THEN now() ELSE delivered_at END,
                next_attempt_at = CASE WHEN $4 = 'pending'
                                       THEN greatest(created_at + $6::float8 * interval '1 ms',
                                                     now() - $5::int * interval '1 ms' + $7::float8 * interval '1 ms') END
          WHERE id = $1 AND next_slot = $2 AND delivery_status || '' = 'pending'
          RETURNING next_attempt_at`,
        [event.id, slot, slot + 1, status, result.durationMs, next?.dueMs ?? null, next?.minGapMs ?? null],
      );
      if (moved?.next_attempt_at) {
        await this.db.rows(
          `SELECT graphile_worker.add_job('${DELIVER_TASK}',
                                          json_build_object('event_id', $1::text, 'slot', $2::int, 'job_key', $4::text),
                                          run_at => $3, job_key => $4, max_attempts => ${JOB_MAX_ATTEMPTS})`,
          [event.id, slot + 1, moved.next_attempt_at, slotJobKey(event.id, slot + 1)],
        );
      }
    });
  }

  /**
   * Records a redelivery; a 2xx makes the event delivered whatever its status was. The
   * job's key (`jobKey`, unique to the redelivery) is taken from it in the same
   * transaction: were the job's own end not recorded (the queue's connection lost, its pool
   * replaced), the job would run again once its lease lapsed, find its key gone and do
   * nothing (DeliveryTask.run), as a scheduled job finds its slot past. graphile-worker's
   * `remove_job` clears the key of a job still locked, and keeps it from being retried.
   */
  recordRedelivery(eventId: string, result: AttemptResult, jobKey: string | undefined): Promise<void> {
    return this.db.transaction('notifications', async () => {
      await this.recordAttempt(eventId, 'redelivery', result);
      if (jobKey !== undefined) await this.db.rows('SELECT graphile_worker.remove_job($1)', [jobKey]);
      if (!result.delivered) return;
      await this.db.rows(
        `UPDATE events SET delivery_status = 'delivered', delivered_at = now(), next_attempt_at = NULL WHERE id = $1`,
        [eventId],
      );
    });
  }

  /**
   * Every attempt, however it ended and whichever job made it, is one row and counts once
   * in the event's `attempts`; its `last_*` fields show the attempt that started last, so
   * the event agrees with its attempts' list also when a redelivery and a scheduled
   * attempt overlapped (the one that started first may be recorded last). Recording the
   * same attempt again (the task tries again after a connection broke during COMMIT, which
   * may have succeeded) changes nothing: an attempt is its event, kind and start time.
   */
  private async recordAttempt(eventId: string, kind: 'scheduled' | 'redelivery', result: AttemptResult) {
    await this.db.rows(
      `WITH attempt AS (
         INSERT INTO notification_attempts (event_id, attempted_at, url, kind, status_code, error, duration_ms,
                                            response_body)
         SELECT $1, $2, $3, $4, $5, $6, $7, $8
          WHERE NOT EXISTS (SELECT 1 FROM notification_attempts
                             WHERE event_id = $1 AND attempted_at = $2 AND kind = $4)
         RETURNING 1)
       UPDATE events
          SET attempts = attempts + 1,
              last_attempt_at = greatest(last_attempt_at, $2),
              last_status_code = CASE WHEN last_attempt_at > $2 THEN last_status_code ELSE $5 END,
              last_error = CASE WHEN last_attempt_at > $2 THEN last_error ELSE $6 END,
              last_duration_ms = CASE WHEN last_attempt_at > $2 THEN last_duration_ms ELSE $7 END
        WHERE id = $1 AND EXISTS (SELECT 1 FROM attempt)`,
      [eventId, result.at, result.url, kind, result.statusCode, result.error, result.durationMs, result.responseBody],
    );
  }
}
