import { RequestMethod, Type } from '@nestjs/common';
import { ApiBearerAuth, ApiExtension, ApiExtraModels, ApiSecurity } from '@nestjs/swagger';
import { ErrorCode } from '../errors/error-catalog';
import { addErrorCodes, declare } from './declared-responses';
import { ErrorSchema } from './error.schema';

/**
 * The error codes a route can answer, besides those of ApiStandardErrors and
 * @Idempotent(). Grouped by their HTTP status from the error catalog: one response per
 * status, with the shared `Error` schema and its `error` narrowed to these codes.
 * On a controller class, the codes apply to every route of it.
 */
export function ApiErrors(...codes: ErrorCode[]): MethodDecorator & ClassDecorator {
  return ((target: object, _key?: string | symbol, descriptor?: PropertyDescriptor) => {
    const handlers = descriptor ? [descriptor.value as object] : routeHandlers(target as Type<unknown>);
    for (const handler of handlers) declare(handler, (declared) => addErrorCodes(declared, codes));
    ApiExtraModels(ErrorSchema)(target as Type<unknown>);
    return descriptor ?? target;
  }) as MethodDecorator & ClassDecorator;
}

export type RouteAuth = 'api-key' | 'admin' | 'public';

const AUTH_ERRORS: Record<RouteAuth, ErrorCode[]> = {
  'api-key': ['api_key_missing', 'api_key_invalid', 'rate_limited'],
  admin: ['api_key_missing', 'api_key_invalid', 'rate_limited', 'route_not_found'],
  public: [],
};
/**
 * What any body a write is sent with can be refused for before the route runs (the
 * parser also refuses JSON PostgreSQL cannot store: parameter_invalid). A body that stops
 * arriving is one of CONNECTION_ERRORS.
 */
const BODY_ERRORS: ErrorCode[] = ['invalid_json', 'parameter_invalid', 'payload_too_large', 'unsupported_media_type'];

/**
 * What any request can be answered before it is routed (docs/operations.md, "Slow and
 * hostile clients"): headers or a body that do not arrive in time (408), headers over
 * 16 KiB (431), and what the HTTP parser refuses or a Host header that is missing or
 * doubled (400 malformed_request).
 */
const CONNECTION_ERRORS: ErrorCode[] = ['request_timeout', 'headers_too_large', 'malformed_request'];

/**
 * On a controller class: its security requirement and the answers every one of its
 * routes can give: 408, 431 and 400 malformed_request (CONNECTION_ERRORS), 401
 * (authenticated routes), 400 invalid_json / 413 / 415 (writes),
 * 400 parameter_invalid (writes, and routes with path parameters), 500, and 503 with
 * Retry-After when the database is unreachable (`database: false` for a controller that
 * never touches it). Class decorators run after the method decorators, so it sees every
 * route, whatever its position.
 */
export function ApiStandardErrors(auth: RouteAuth, options: { database?: boolean } = {}): ClassDecorator {
  return (target) => {
    for (const handler of routeHandlers(target as unknown as Type<unknown>)) {
      const isWrite = Reflect.getMetadata('method', handler) === RequestMethod.POST;
      const codes: ErrorCode[] = [...CONNECTION_ERRORS, ...AUTH_ERRORS[auth], 'internal_error'];
      // Path parameters pass the validation pipe, which refuses values PostgreSQL cannot
      // store (a malformed percent-encoding in one never reaches the route: malformed_request).
      if (String(Reflect.getMetadata('path', handler)).includes(':')) codes.push('parameter_invalid');
      if (options.database !== false) codes.push('service_unavailable');
      if (isWrite) codes.push(...BODY_ERRORS);
      declare(handler, (declared) => addErrorCodes(declared, codes));
      // Turned into `security: []` by finalizeDocument: explicitly public, not forgotten.
      if (auth === 'public') ApiExtension('x-kuko-public', true)(target.prototype, '', { value: handler });
    }
    ApiExtraModels(ErrorSchema)(target);
    if (auth === 'api-key') ApiSecurity('api-key')(target);
    if (auth === 'admin') ApiBearerAuth('admin')(target);
  };
}

/** The route handlers of a controller: its methods that carry Nest's route metadata. */
export function routeHandlers(controller: Type<unknown>): object[] {
  const prototype = controller.prototype as Record<string, unknown>;
  return Object.getOwnPropertyNames(prototype)
    .filter((name) => name !== 'constructor')
    .map((name) => Object.getOwnPropertyDescriptor(prototype, name)?.value as unknown)
    .filter(
      (value): value is object => typeof value === 'function' && Reflect.getMetadata('path', value) !== undefined,
    );
}
