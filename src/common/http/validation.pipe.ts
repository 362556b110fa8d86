import { ArgumentMetadata, ValidationError, ValidationPipe } from '@nestjs/common';
import { getMetadataStorage } from 'class-validator';
import { DomainError } from '../errors/domain-error';
import { unknownParameter } from '../errors/unknown-parameter';
import { unstorableStringIn, withoutWrittenNumbers } from '../validation/json-text';
import { isJsonObject, refuseUnstorableJson } from '../validation/storable-json';
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
    // Every rule of a failing field runs (a valid one runs them all anyway), so that a
    // value of the wrong type is told its type, not a length or pattern (pickRule).
    stopAtFirstError: false,
    exceptionFactory: (errors) => toValidationError(errors),
  });
}

export function toValidationError(errors: ValidationError[]): DomainError {
  const found = firstLeaf(errors, '');
  const constraints = found?.error.constraints ?? {};
  // A field with an empty name (`?=`, `{"": 1}`) is unknown like any other.
  if (found && 'whitelistValidation' in constraints) return unknownParameter(found.path);
  if (!found || found.path === '') {
    return new DomainError('parameter_invalid', 'The request body must be a JSON object.', null);
  }
  const { error, path } = found;
  if (error.value === undefined) {
    return new DomainError('parameter_missing', `Missing required parameter: ${path}`, path);
  }
  // A field's own rule would describe a value it was not sent ("at most 1000 characters").
  const fix = 'isDefined' in constraints ? 'send a value' : 'leave it out, or send a value';
  const message =
    error.value === null ? `${path} must not be null: ${fix}` : (pickRule(constraints) ?? `${path} is invalid`);
  return new DomainError('parameter_invalid', message, path);
}

/** class-validator's rules that check a value's type, before any length, range or pattern. */
const TYPE_RULES = ['isString', 'isInt', 'isNumber', 'isBoolean', 'isObject', 'isArray'];

/**
 * The message of the rule to name: the type rule when the value is not of the field's
 * type (`description: 5` is "must be a string", not "at most 1000 characters";
 * `expires_in: "10"` is "a whole number of seconds", not "from 0 to 2592000"), else the
 * first broken rule in the order the DTO's decorators register them.
 */
function pickRule(constraints: Record<string, string>): string | undefined {
  const typeRule = TYPE_RULES.find((rule) => rule in constraints);
  return typeRule ? constraints[typeRule] : Object.values(constraints)[0];
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
  override async transform(value: unknown, metadata: ArgumentMetadata) {
    // Query strings and path parameters are checked here, bodies when parsed: a string
    // there that PostgreSQL cannot store is refused now, after an unknown field's name.
    refusePrototypeNames(value);
    const unstorable =
      metadata.type === 'body' ? unstorableStringIn(value) : refuseUnstorableJson(value, metadata.data);
    if (unstorable) throw (metadata.type === 'body' && unknownField(value, metadata.metatype)) || unstorable;
    if (metadata.type === 'query') refuseRepeatedParameter(value, metadata.metatype);
    if (metadata.type !== 'body') return super.transform(value, metadata);
    if (value === undefined) return super.transform({}, metadata);
    if (!isJsonObject(value)) {
      throw new DomainError('parameter_invalid', 'The request body must be a JSON object.', null);
    }
    // Numbers written with a fraction are refused by each field's own rule (WrittenNumber).
    const body = (withoutWrittenNumbers(value) ?? value) as Record<string, unknown>;
    // Copied before Nest strips keys from the value, to be put back (AsSent).
    const maps = copyMaps(body, asSentOf(metadata.metatype));
    const entity = (await super.transform(body, metadata)) as Record<string, unknown>;
    return maps ? this.withMapsAsSent(entity, maps) : entity;
  }

  /**
   * Puts back the @AsSent() maps as they were sent, and validates the DTO again with
   * them: the first validation saw them without the keys Nest and class-transformer drop.
   */
  private async withMapsAsSent(entity: Record<string, unknown>, maps: Record<string, unknown>) {
    Object.assign(entity, maps);
    const errors = await this.validate(entity, this.validatorOptions);
    if (errors.length > 0) throw await this.exceptionFactory(errors);
    return entity;
  }
}

/**
 * The names of Object.prototype's members (`constructor`, `toString`, `hasOwnProperty` …)
 * and `prototype`. No DTO or query has such a field, and class-validator's whitelist would
 * let them through unseen (it looks a field's rules up in a plain object, where they are
 * inherited), so they are refused like any unknown field, never silently dropped.
 */
const PROTOTYPE_NAMES = [...Object.getOwnPropertyNames(Object.prototype), 'prototype'];

function refusePrototypeNames(value: unknown): void {
  if (typeof value !== 'object' || value === null) return;
  for (const name of PROTOTYPE_NAMES) {
    if (Object.hasOwn(value, name)) {
      throw unknownParameter(name);
    }
  }
}

/**
 * A query parameter given more than once (`?type=a&type=b`) arrives as a list, which no
 * parameter takes: said so, rather than that the list is not one of the values. An
 * unknown one is refused as unknown first, as it would be once.
 */
function refuseRepeatedParameter(query: unknown, type: unknown): void {
  // The query parser's object, whose prototype is its own empty one.
  if (typeof query !== 'object' || query === null) return;
  const repeated = Object.entries(query).find(([, given]) => Array.isArray(given));
  if (!repeated) return;
  const unknown = firstUnknownName(Object.keys(query), type);
  if (unknown !== undefined) throw unknownParameter(unknown);
  const [name, values] = repeated as [string, unknown[]];
  throw new DomainError('parameter_invalid', `${name} was given ${values.length} times; give it once`, name);
}

/** parameter_unknown for the body's first field its DTO has no rule for, or null. */
function unknownField(value: unknown, type: unknown): DomainError | null {
  if (!isJsonObject(value)) return null;
  const name = firstUnknownName(Object.keys(value), type);
  return name === undefined ? null : unknownParameter(name);
}

/** The first of `names` that the DTO `type` has no rule for. */
function firstUnknownName(names: string[], type: unknown): string | undefined {
  if (typeof type !== 'function') return undefined;
  const known = new Set(
    getMetadataStorage()
      .getTargetValidationMetadatas(type, '', true, false)
      .map((rule) => rule.propertyName),
  );
  return names.find((name) => !known.has(name));
}

/** A shallow copy of each named field that was sent as an object, or null when none was. */
function copyMaps(value: Record<string, unknown>, names: readonly string[]): Record<string, unknown> | null {
  let maps: Record<string, unknown> | null = null;
  for (const name of names) {
    const field = value[name];
    // Object.fromEntries defines every key as an own property, `__proto__` included.
    if (Object.hasOwn(value, name) && isJsonObject(field))
      (maps ??= {})[name] = Object.fromEntries(Object.entries(field));
  }
  return maps;
}
