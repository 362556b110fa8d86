/**
 * Records the events of state changes inside the business transaction that makes them
 * (a transactional outbox, docs/notifications.md). The feature that made the change hands
 * over the object re-read after it and mapped exactly as its GET maps it, so the
 * notification shows what GET showed then; notifications/ needs to know no feature.
 */
import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import type { Environment } from '../domain/environment';
import { EventType, newEventId } from './event';
import { EventsRepository } from './events.repository';

/** What changed, as the feature that changed it describes it. */
export interface ChangedObject {
  merchantId: string;
  environment: Environment;
  orderId: string;
  refundId: string | null;
  /** The API object, as its GET returns it now. */
  object: unknown;
  /** Where the event goes; null records it as no_destination. */
  notifyUrl: string | null;
}

@Injectable()
export class EventRecorder {
  constructor(
    private readonly events: EventsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  record(type: EventType, changed: ChangedObject): Promise<void> {
    return this.events.record({
      id: newEventId(),
      type,
      ...changed,
      firstDelayMs: this.config.notifications.retrySchedule[0] ?? 0,
    });
  }
}
