import { Controller, Get } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { HealthCheckService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { DomainError } from '../common/errors/domain-error';

@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
  ) {}

  /** Liveness: the process answers. Never touches the database. */
  @Get()
  live() {
    return { status: 'ok' };
  }

  /** Readiness: the database answers within a second. */
  @Get('ready')
  async ready() {
    try {
      const result = await this.health.check([() => this.database.pingCheck('database', { timeout: 1000 })]);
      return { status: result.status, checks: result.info };
    } catch {
      throw new DomainError('service_unavailable', 'The database is unreachable.', null, { 'Retry-After': '1' });
    }
  }
}
