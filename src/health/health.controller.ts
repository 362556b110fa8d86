import { Controller, Get } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { DomainError } from '../common/errors/domain-error';
import { Db } from '../database/db';
import { ping } from '../database/ping';

@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(private readonly db: Db) {}

  /** Liveness: the process answers. Never touches the database. */
  @Get()
  live() {
    return { status: 'ok' };
  }

  /** Readiness: the database answers within a second. */
  @Get('ready')
  async ready() {
    if (!(await ping(this.db, 1000))) {
      throw new DomainError('service_unavailable', 'The database is unreachable.', null, { 'Retry-After': '1' });
    }
    return { status: 'ok', checks: { database: { status: 'up' } } };
  }
}
