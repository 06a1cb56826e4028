import { ValidateBy } from 'class-validator';
import { parseRfc3339 } from '../rfc3339';

/** An RFC 3339 time (a real instant); how far ahead it may be is the service's to check. */
export function IsRfc3339(field: string): PropertyDecorator {
  return ValidateBy({
    name: 'isRfc3339',
    validator: {
      validate: (v: unknown) => typeof v === 'string' && v.length <= 40 && parseRfc3339(v) !== null,
      defaultMessage: () => `${field} must be an RFC 3339 time`,
    },
  });
}
