import { Injectable } from '@nestjs/common';
import { RequestAuth } from '../common/auth/request-auth';
import { DomainError, notFound } from '../common/errors/domain-error';
import { Page } from '../common/http/api-response';
import { DEFAULT_PAGE_LIMIT, toPage } from '../common/pagination';
import { ListEventsQuery } from './dto/list-events.query';
import { EventRow, toAttemptObject, toEventWithDelivery } from './event';
import { EventsRepository } from './events.repository';

/** The events API: what was sent to the merchant, and how its delivery went. */
@Injectable()
export class EventsService {
  constructor(private readonly events: EventsRepository) {}

  async list(auth: RequestAuth, query: ListEventsQuery): Promise<Page<ReturnType<typeof toEventWithDelivery>>> {
    const filter = { type: query.type, orderId: query.order_id };
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
    const rows = await this.events.listPage(auth.merchantId, auth.environment, filter, limit, query.starting_after);
    return toPage(rows, toEventWithDelivery, 'event', query);
  }

  async getById(auth: RequestAuth, id: string) {
    return toEventWithDelivery(await this.row(auth, id));
  }

  async attempts(auth: RequestAuth, id: string) {
    await this.row(auth, id);
    return new Page((await this.events.attempts(id)).map(toAttemptObject), false);
  }

  /** One more attempt now, outside the schedule, whatever the event's status. */
  async redeliver(auth: RequestAuth, id: string) {
    const event = await this.row(auth, id);
    if (!event.notify_url) {
      throw new DomainError('event_not_deliverable', `Event ${id} has no notify_url to deliver to.`, 'id');
    }
    await this.events.enqueueRedelivery(id);
    return toEventWithDelivery(event);
  }

  private async row(auth: RequestAuth, id: string): Promise<EventRow> {
    const row = await this.events.findScoped(auth.merchantId, auth.environment, id);
    if (!row) throw notFound('event', id);
    return row;
  }
}
