import { ArgumentMetadata, ValidationError, ValidationPipe } from '@nestjs/common';
import type { ValidatorOptions } from 'class-validator';
import { DomainError } from '../errors/domain-error';
import { refuseUnstorableJson } from '../validation/storable-json';
import { asSentOf } from '../validation/validators';

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
  /**
   * The object-valued fields of the value being validated, copied before Nest strips
   * keys from them; validate() puts back those of @AsSent() properties. ValidationPipe
   * calls stripProtoKeys, then validate, with no await between them, so one field serves
   * all requests.
   */
  private maps: Record<string, unknown> | null = null;

  protected override stripProtoKeys(value: unknown): void {
    // No DTO has such a field: refused like any unknown one, not silently stripped.
    for (const name of ['__proto__', 'constructor', 'prototype']) {
      if (typeof value === 'object' && value !== null && Object.hasOwn(value, name)) {
        throw new DomainError('parameter_unknown', `Received unknown parameter: ${name}`, name);
      }
    }
    this.maps = copyMaps(value);
    super.stripProtoKeys(value);
  }

  protected override validate(entity: object, options?: ValidatorOptions) {
    const maps = this.maps;
    this.maps = null;
    for (const name of asSentOf(entity.constructor)) {
      if (maps && name in maps) (entity as Record<string, unknown>)[name] = maps[name];
    }
    return super.validate(entity, options);
  }

  override transform(value: unknown, metadata: ArgumentMetadata) {
    // Bodies were checked when parsed; query strings and path parameters are checked here.
    const refusal = metadata.type === 'body' ? null : refuseUnstorableJson(value, metadata.data);
    if (refusal) throw refusal;
    if (metadata.type !== 'body') return super.transform(value, metadata);
    if (value === undefined) return super.transform({}, metadata);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new DomainError('parameter_invalid', 'The request body must be a JSON object.', null);
    }
    return super.transform(value, metadata);
  }
}

/** A shallow copy of each plain-object field of a value (a body's `metadata`). */
function copyMaps(value: unknown): Record<string, unknown> | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const maps: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(value)) {
    // Object.fromEntries defines every key as an own property, `__proto__` included.
    if (typeof field === 'object' && field !== null && !Array.isArray(field))
      maps[name] = Object.fromEntries(Object.entries(field));
  }
  return maps;
}
