/**
 * Argument validation with class-validator, imported once. type-graphql's default validation
 * does `await import('class-validator')` for every validated argument (about 1 ms each under
 * the swc hook); `validateArgument` is given to buildSchema as its `validateFn` and behaves
 * like that default: objects (and the objects of a list) are validated with
 * `skipMissingProperties` and without `forbidUnknownValues`, and failures throw
 * ArgumentValidationError (BAD_USER_INPUT).
 *
 * Subscriptions with their own `subscribe` function get raw arguments that type-graphql never
 * validates: `validatedInput` checks them the same way before anything runs.
 */
import { validateSync, type ValidationError, type ValidatorOptions } from 'class-validator';
import { ArgumentValidationError, type ValidatorFn } from 'type-graphql';

const OPTIONS: ValidatorOptions = { skipMissingProperties: true, forbidUnknownValues: false };

const isObject = (value: unknown): value is object => value !== null && typeof value === 'object';

function check(value: object): void {
  const errors: ValidationError[] = validateSync(value, OPTIONS);
  if (errors.length) throw new ArgumentValidationError(errors);
}

export const validateArgument: ValidatorFn = (value: unknown) => {
  if (Array.isArray(value)) {
    for (const item of value) if (isObject(item)) check(item);
  } else if (isObject(value)) check(value);
};

/** `value` (a GraphQL input object as graphql-js coerced it) as an instance of `type`, validated. */
export function validatedInput<T extends object>(type: new () => T, value: unknown): T {
  const instance = Object.assign(new type(), value);
  check(instance);
  return instance;
}

/**
 * For the arguments of a subscription's event resolver: they were checked by `validatedInput`
 * in its subscribe, and type-graphql would otherwise validate them again for every event.
 */
export const alreadyValidated: ValidatorFn = () => {};
