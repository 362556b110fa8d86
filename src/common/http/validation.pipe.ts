import { ArgumentMetadata, ValidationError, ValidationPipe } from '@nestjs/common';
import { DomainError } from '../errors/domain-error';
import { refuseUnstorableJson } from '../validation/storable-json';

/**
 * Body and query validation with class-validator DTOs. Unknown fields are refused, and
 * the first failure becomes one structured error whose `param` names the field (nested
 * fields as `metadata.key`).
 */
export function createValidationPipe(): ValidationPipe {
  return new BodyValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    validationError: { target: false, value: true },
    stopAtFirstError: true,
    exceptionFactory: (errors) => toValidationError(errors),
  });
}

export function toValidationError(errors: ValidationError[]): DomainError {
  const found = firstLeaf(errors, '');
  if (!found || found.path === '') {
    return new DomainError('parameter_invalid', 'The request body must be a JSON object.', null);
  }
  const { error, path } = found;
  const constraints = error.constraints ?? {};
  if ('whitelistValidation' in constraints) {
    return new DomainError('parameter_unknown', `Received unknown parameter: ${path}`, path);
  }
  if (error.value === undefined) {
    return new DomainError('parameter_missing', `Missing required parameter: ${path}`, path);
  }
  const message = Object.values(constraints)[0] ?? `${path} is invalid`;
  return new DomainError('parameter_invalid', message, path);
}

function firstLeaf(errors: ValidationError[], prefix: string): { error: ValidationError; path: string } | null {
  for (const error of errors) {
    const path = prefix ? `${prefix}.${error.property}` : error.property;
    if (error.constraints && Object.keys(error.constraints).length > 0) return { error, path };
    const nested = firstLeaf(error.children ?? [], path);
    if (nested) return nested;
  }
  return null;
}

/**
 * An absent body counts as {} (docs/idempotency.md), so validation names the missing fields; any
 * other JSON that is not an object is refused as a whole.
 */
class BodyValidationPipe extends ValidationPipe {
  override transform(value: unknown, metadata: ArgumentMetadata) {
    // Bodies were checked when parsed; query strings and path parameters are checked here.
    const refusal = metadata.type === 'body' ? null : refuseUnstorableJson(value);
    if (refusal) throw refusal;
    if (metadata.type !== 'body') return super.transform(value, metadata);
    if (value === undefined) return super.transform({}, metadata);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new DomainError('parameter_invalid', 'The request body must be a JSON object.', null);
    }
    return super.transform(value, metadata);
  }
}
