import { registerDecorator, ValidationArguments, ValidationOptions } from 'class-validator';

/**
 * An amount in integer minor units within [min, max], checked as one rule so that the
 * message names what is wrong first: a string, boolean or fraction is "not an integer",
 * never "greater than the maximum" (class-validator runs stacked rules in an order
 * that reported the range for "abc").
 */
export function IsMinorUnits(min: number, max: number, options?: ValidationOptions) {
  return (target: object, propertyName: string) =>
    registerDecorator({
      name: 'isMinorUnits',
      target: target.constructor,
      propertyName,
      options: { message: (args: ValidationArguments) => minorUnitsMessage(args, min, max), ...options },
      validator: {
        validate: (value: unknown) =>
          Number.isSafeInteger(value) && (value as number) >= min && (value as number) <= max,
      },
    });
}

function minorUnitsMessage({ property, value }: ValidationArguments, min: number, max: number): string {
  // An integer too large for a double to hold exactly (99999999999999999999) is out of
  // range, not "not an integer".
  const integer = typeof value === 'number' && Number.isInteger(value);
  if (!integer) return `${property} must be an integer number of minor units`;
  return value < min ? `${property} must be at least ${min}` : `${property} must not be greater than ${max}`;
}
