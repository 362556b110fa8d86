import { Controller, Get, Param, Post, Query, UseGuards } from '@nestjs/common';
import { ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ApiKeyGuard } from '../merchants/api-key.guard';
import { Auth, RequestAuth } from '../common/auth/request-auth';
import { WithStatus } from '../common/http/api-response';
import { Idempotent } from '../idempotency/idempotent.decorator';
import { ListEventsQuery } from './dto/list-events.query';
import { EventsService } from './events.service';

@ApiTags('events')
@ApiSecurity('api-key')
@Controller('v1/events')
@UseGuards(ApiKeyGuard)
export class EventsController {
  constructor(private readonly events: EventsService) {}

  @Get()
  list(@Auth() auth: RequestAuth, @Query() query: ListEventsQuery) {
    return this.events.list(auth, query);
  }

  @Get(':id')
  get(@Auth() auth: RequestAuth, @Param('id') id: string) {
    return this.events.getById(auth, id);
  }

  @Get(':id/attempts')
  attempts(@Auth() auth: RequestAuth, @Param('id') id: string) {
    return this.events.attempts(auth, id);
  }

  /** 202: the attempt is queued and made shortly after. */
  @Post(':id/redeliver')
  @Idempotent()
  async redeliver(@Auth() auth: RequestAuth, @Param('id') id: string) {
    return new WithStatus(202, await this.events.redeliver(auth, id));
  }
}
