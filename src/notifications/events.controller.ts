import { Controller, Get, Param, Post, Query, UseGuards } from '@nestjs/common';
import { ApiExtraModels, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiKeyGuard } from '../merchants/api-key.guard';
import { Auth, RequestAuth } from '../common/auth/request-auth';
import { WithStatus } from '../common/http/api-response';
import { ApiErrors, ApiStandardErrors } from '../common/openapi/api-errors.decorator';
import { ApiData, ApiPage } from '../common/openapi/api-success.decorator';
import { ApiIdParam } from '../common/openapi/id-param';
import { Idempotent } from '../idempotency/idempotent.decorator';
import { ListEventsQuery } from './dto/list-events.query';
import { EventAttemptSchema, EventSchema, EventWithDeliverySchema } from './event.schema';
import { EventsService } from './events.service';
import { TakesNoBody } from '../common/http/takes-no-body';
import { WholeList } from '../common/http/whole-list';

@ApiStandardErrors('api-key')
@ApiTags('events')
@ApiExtraModels(EventSchema)
@Controller('v1/events')
@UseGuards(ApiKeyGuard)
export class EventsController {
  constructor(private readonly events: EventsService) {}

  @Get()
  @ApiOperation({
    operationId: 'listEvents',
    summary: 'List notification events',
    description: "Newest first; `order_id` also finds the events of the order's refunds.",
  })
  @ApiPage(EventWithDeliverySchema, { description: 'A page of events, newest first, with their delivery.' })
  @ApiErrors('parameter_invalid', 'parameter_unknown', 'resource_missing')
  list(@Auth() auth: RequestAuth, @Query() query: ListEventsQuery) {
    return this.events.list(auth, query);
  }

  @Get(':id')
  @ApiIdParam('evt')
  @ApiOperation({ operationId: 'retrieveEvent', summary: 'Retrieve a notification event and its delivery' })
  @ApiData(200, EventWithDeliverySchema, { description: 'The event and where its delivery stands.' })
  @ApiErrors('resource_missing')
  get(@Auth() auth: RequestAuth, @Param('id') id: string) {
    return this.events.getById(auth, id);
  }

  @Get(':id/attempts')
  @ApiIdParam('evt')
  @WholeList()
  @ApiOperation({ operationId: 'listEventAttempts', summary: 'List the delivery attempts of an event' })
  @ApiPage(EventAttemptSchema, {
    description: 'Every attempt, oldest first by `at`, on one page (has_more is false); no query parameters.',
  })
  @ApiErrors('resource_missing')
  attempts(@Auth() auth: RequestAuth, @Param('id') id: string) {
    return this.events.attempts(auth, id);
  }

  /** 202: the attempt is queued and made shortly after. */
  @Post(':id/redeliver')
  @ApiIdParam('evt')
  @TakesNoBody()
  @Idempotent()
  @ApiOperation({
    operationId: 'redeliverEvent',
    summary: 'Deliver an event once more, now',
    description: 'One more attempt outside the schedule, whatever the delivery status; made shortly after the answer.',
  })
  @ApiData(202, EventWithDeliverySchema, { description: 'Queued; the event as it stood before the new attempt.' })
  @ApiErrors('resource_missing', 'event_not_deliverable')
  async redeliver(@Auth() auth: RequestAuth, @Param('id') id: string) {
    return new WithStatus(202, await this.events.redeliver(auth, id));
  }
}
