import { applyDecorators, Controller, UseGuards } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ApiStandardErrors } from '../openapi/api-errors.decorator';
import { ADMIN_ROUTE_PREFIX, AdminGuard } from './admin.guard';

/**
 * Declares an admin API controller at `path` under the admin prefix, behind AdminGuard,
 * so that the prefix the HTTP adapter hides without ADMIN_TOKEN (app.factory.ts) and the
 * routes it hides are one value, and no admin route can be mounted without the guard.
 */
export function AdminRoutes(path: string): ClassDecorator {
  return applyDecorators(
    ApiStandardErrors('admin'),
    ApiTags('admin'),
    Controller(`${ADMIN_ROUTE_PREFIX}${path}`),
    UseGuards(AdminGuard),
  );
}
