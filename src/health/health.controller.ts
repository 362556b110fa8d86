import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { HealthCheckService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { DomainError } from '../common/errors/domain-error';
import { ApiErrors, ApiStandardErrors } from '../common/openapi/api-errors.decorator';
import { ApiData } from '../common/openapi/api-success.decorator';
import { LivenessSchema, ReadinessSchema } from './health.schemas';

@ApiStandardErrors('public', { database: false })
@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
  ) {}

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
    try {
      const result = await this.health.check([() => this.database.pingCheck('database', { timeout: 1000 })]);
      return { status: result.status, checks: result.info };
    } catch {
      throw new DomainError('service_unavailable', 'The database is unreachable.', null, { 'Retry-After': '1' });
    }
  }
}
