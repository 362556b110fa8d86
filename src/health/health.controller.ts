import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { serviceUnavailable } from '../common/errors/domain-error';
import { ApiErrors, ApiStandardErrors } from '../common/openapi/api-errors.decorator';
import { ApiData } from '../common/openapi/api-success.decorator';
import { Db } from '../database/db';
import { ping } from '../database/ping';
import { LivenessSchema, ReadinessSchema } from './health.schemas';

@ApiStandardErrors('public', { database: false })
@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(private readonly db: Db) {}

  /** Liveness: the process answers. Never touches the database. */
  @Get()
  @ApiOperation({ operationId: 'health', summary: 'Liveness: the process answers (never touches the database)' })
  @ApiData(200, LivenessSchema, { description: 'Alive.' })
  live() {
    return { status: 'ok' };
  }

  /** Readiness: the database answers within a second. */
  @Get('ready')
  @ApiOperation({ operationId: 'healthReady', summary: 'Readiness: the database answers within a second' })
  @ApiData(200, ReadinessSchema, { description: 'Ready.' })
  @ApiErrors('service_unavailable')
  async ready() {
    const check = await ping(this.db, 1000);
    if (!check.up) throw serviceUnavailable(`The database ${check.reason}.`);
    return { status: 'ok', checks: { database: { status: 'up' } } };
  }
}
