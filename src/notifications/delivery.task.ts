/**
 * The job that makes one attempt (docs/notifications.md, "Delivery"). It runs after the
 * event committed, never inside a transaction while it waits on the merchant: read the
 * event, sign it with a fresh timestamp, POST it, then record the attempt and the next
 * step in one short transaction. A job whose slot is no longer due (its attempt was
 * recorded before a crash lost the job's completion) does nothing.
 */
import { Inject, Injectable, Logger } from '@nestjs/common';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Metrics } from '../common/metrics/metrics';
import { FailureStreak } from '../common/logging/failure-streak';
import { isDatabaseUnavailable, isWorthTryingAgain, loadShedCause } from '../database/pg-errors';
import { Slots } from '../database/slots';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { EventRow, toEventObject } from './event';
import { AttemptResult, DeliveryJob, EventsRepository } from './events.repository';
import { NotificationHttpClient } from './notification-http.client';
import { NotificationSecrets, SecretsUnreadableError } from '../merchants/notification-secrets.service';

const VERSION = (JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string })
  .version;
/** Between tries of a step while the database is away: 250 ms, growing to 2 s. */
const OUTAGE_RETRY_FIRST_MS = 250;
const OUTAGE_RETRY_MAX_MS = 2000;
/**
 * How many times a step is tried again after the passing failures of a database that
 * answers (a deadlock, a statement timeout, a cancel): enough for a deadlock or a lock
 * that is let go, not for ever, so that an operator's cancel of a stuck statement, or a
 * statement that always times out, ends as a failed job (run again later) rather than a
 * worker held for good. An outage is waited for however long it lasts.
 */
const PASSING_FAILURE_TRIES = 10;
/** How often a step that keeps failing says so again. */
const OUTAGE_LOG_MS = 30_000;
/** How long an attempt waits for a worker slot of its merchant before it is put back. */
const SLOT_WAIT_MS = 25;
/** An attempt put back n times is due again after 250 ms × 2ⁿ (±25 %), at most 30 s. */
const PUT_BACK_FIRST_MS = 250;
const PUT_BACK_MAX_MS = 30_000;
export const USER_AGENT = `KukoPay-Notifications/${VERSION}`;

@Injectable()
export class DeliveryTask {
  private readonly logger = new Logger(DeliveryTask.name);
  /**
   * The workers, shared between merchants as write slots are between tenants: one
   * merchant's attempts never hold the last third, so a merchant whose endpoint hangs
   * until the timeout cannot hold up everyone else's notifications.
   */
  private readonly workerSlots: Slots;
  /** The database steps of every attempt of this instance, waiting through one outage. */
  private readonly outage = new FailureStreak('notification delivery: the database', OUTAGE_LOG_MS);
  /** Set when the instance's drain is about to end: a step waiting for the database then gives up. */
  private stopping = false;
  /** Ends the pauses of the steps waiting for the database, so that a stop is not held up. */
  private readonly pauses = new Set<() => void>();

  constructor(
    private readonly events: EventsRepository,
    private readonly secrets: NotificationSecrets,
    private readonly client: NotificationHttpClient,
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    const { concurrency } = config.notifications;
    this.workerSlots = new Slots(concurrency, Math.ceil(concurrency / 3));
  }

  /**
   * The instance's drain is about to end (delivery-queue.ts): a step waiting for the
   * database gives up (the job fails, and any instance runs it again later) rather than
   * being cut off with the process.
   */
  stop(): void {
    this.stopping = true;
    for (const end of this.pauses) end();
  }

  /** `heldKey`: the job's key in the queue as it was taken, null when it holds none. */
  async run(job: DeliveryJob, heldKey: string | null): Promise<void> {
    // Handed on by a put-back whose process died before this job ended: the job it was
    // handed to makes the attempt.
    if (job.job_key !== undefined && job.job_key !== heldKey) return;
    const event = await this.untilTheDatabaseAnswers(() => this.events.find(job.event_id));
    if (!event || !event.notify_url) return;
    const scheduled = typeof job.slot === 'number';
    if (scheduled && (event.delivery_status !== 'pending' || event.next_slot !== job.slot)) return;

    const merchant = event.merchant_id;
    try {
      await this.workerSlots.acquire(merchant, SLOT_WAIT_MS, () => new Error('no worker slot in time'));
    } catch {
      return this.putBack(job);
    }
    try {
      await this.deliver(job, event, event.notify_url);
    } finally {
      this.workerSlots.release(merchant);
    }
  }

  /**
   * Its merchant holds its share of the workers (slow answers, or many at once): the
   * attempt is due again a little later, and this worker is free for other merchants.
   * Each time back it waits twice as long, so a backlog behind an endpoint that hangs
   * costs a few put-backs a second, not a busy loop.
   */
  private async putBack(job: DeliveryJob): Promise<void> {
    const times = job.put_back ?? 0;
    const delayMs = Math.min(PUT_BACK_FIRST_MS * 2 ** times, PUT_BACK_MAX_MS) * (0.75 + Math.random() / 2);
    await this.untilTheDatabaseAnswers(() => this.events.putBack({ ...job, put_back: times + 1 }, Math.round(delayMs)));
    this.metrics.notificationsPutBack.inc();
  }

  private async deliver(job: DeliveryJob, event: EventRow, url: string): Promise<void> {
    const scheduled = typeof job.slot === 'number';
    const result = await this.attempt(event, url);
    this.metrics.notificationAttempts.inc({ result: result.delivered ? 'delivered' : 'failed' });
    const outcome = {
      event_id: event.id,
      slot: job.slot ?? 'redelivery',
      status_code: result.statusCode,
      error: result.error,
    };
    if (!scheduled) {
      this.logger.log({
        msg: result.delivered ? 'notification redelivered' : 'notification redelivery failed',
        ...outcome,
      });
      return this.untilTheDatabaseAnswers(() => this.events.recordRedelivery(event.id, result, job.job_key));
    }
    const schedule = this.config.notifications.retrySchedule;
    const slot = job.slot!;
    // Due on the schedule, and at least half its delay after this attempt started: after
    // an outage the missed slots are spread out again, not sent back to back.
    const next =
      slot + 1 < schedule.length
        ? { dueMs: schedule[slot + 1], minGapMs: (schedule[slot + 1] - schedule[slot]) / 2 }
        : null;
    if (result.delivered) this.logger.log({ msg: 'notification delivered', ...outcome });
    else if (next !== null) this.logger.log({ msg: 'notification attempt failed; it will be retried', ...outcome });
    // The schedule is exhausted: the delivery is now failed, which an operator should see.
    else this.logger.warn({ msg: 'notification delivery failed after its last attempt', ...outcome });
    await this.untilTheDatabaseAnswers(() => this.events.recordScheduled(event, slot, result, next));
  }

  /**
   * Runs a database step of an attempt (reading the event, recording what the merchant
   * answered, putting the attempt back) until the database answers, however long it is
   * away, and through the passing failures of a live database: a deadlock, a lock or
   * statement timeout, a cancelled statement (isWorthTryingAgain), those up to
   * PASSING_FAILURE_TRIES times. The job stays locked
   * under this instance's lease meanwhile (the heartbeat goes over the queue's own
   * connection, delivery-queue.ts), so no other instance takes it.
   * Failing the job instead would have the queue run it again: after the merchant's 2xx,
   * a second delivery by a process that never died; and each failure is charged one of
   * the job's 10 attempts, so a long enough outage would leave the event pending with no
   * job. A stop waits too, until its drain is about to end (stop()): then the job fails
   * and is run again by any instance, so an attempt answered but not recorded is sent
   * again (the one repeat docs/notifications.md allows: the process ended between the
   * 2xx and its record). Any other error (a bug) fails at once.
   */
  private async untilTheDatabaseAnswers<T>(step: () => Promise<T>): Promise<T> {
    let passingFailures = 0;
    for (let pause = OUTAGE_RETRY_FIRST_MS; ; pause = Math.min(pause * 2, OUTAGE_RETRY_MAX_MS)) {
      try {
        const result = await step();
        const recovered = this.outage.succeeded();
        if (recovered) this.logger.log(recovered);
        return result;
      } catch (error) {
        if (this.stopping || !isWorthTryingAgain(error)) throw error;
        const outage = isDatabaseUnavailable(error) || loadShedCause(error) !== null;
        if (!outage && ++passingFailures > PASSING_FAILURE_TRIES) throw error;
        const line = this.outage.failed(`${(error as Error).message}; waiting for it`);
        if (line) this.logger.warn(line);
        await new Promise<void>((resolve) => {
          const end = () => {
            clearTimeout(timer);
            this.pauses.delete(end);
            resolve();
          };
          const timer = setTimeout(end, pause);
          this.pauses.add(end);
        });
      }
    }
  }

  private async attempt(event: EventRow, url: string): Promise<AttemptResult> {
    const body = JSON.stringify(toEventObject(event));
    const at = new Date();
    const signature = await this.signature(event, at, body);
    if (signature === null) {
      // Nothing sent: the attempt fails and the schedule goes on, so that a roll within it
      // delivers the event and, without one, it ends failed instead of pending for ever.
      return {
        at,
        url,
        delivered: false,
        statusCode: null,
        error: 'secret_unreadable',
        durationMs: 0,
        responseBody: null,
      };
    }
    const answer = await this.client.post(url, body, {
      'Content-Type': 'application/json',
      'User-Agent': USER_AGENT,
      'webhook-id': event.id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': signature,
    });
    // The client sets an error for everything but a 2xx answer.
    return { at, url, delivered: answer.error === null, ...answer };
  }

  /** The webhook-signature header, or null when no secret of the merchant can be opened. */
  private async signature(event: EventRow, at: Date, body: string): Promise<string | null> {
    try {
      return await this.untilTheDatabaseAnswers(() =>
        this.secrets.signature(event.merchant_id, event.environment, event.id, at, body),
      );
    } catch (error) {
      if (!(error instanceof SecretsUnreadableError)) throw error;
      this.logger.warn({ msg: error.message, event_id: event.id });
      return null;
    }
  }
}
