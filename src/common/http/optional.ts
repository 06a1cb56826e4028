import { ValidateIf } from 'class-validator';

/**
 * Like @IsOptional(), but only an absent field is skipped: an explicit `null` is still validated (and
 * so refused by the type checks). Used where null has no meaning, e.g. a deep-merged settings patch.
 */
export function IsOptionalNotNull(): PropertyDecorator {
  return ValidateIf((_object: object, value: unknown) => value !== undefined);
}
