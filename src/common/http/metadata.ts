import { IsObject, registerDecorator, ValidationArguments } from 'class-validator';

/** Custom data (users, channels, messages): a JSON object of at most 4 KiB once serialised. */
export const METADATA_MAX_BYTES = 4096;

/** At most `max` bytes of UTF-8 once serialised as JSON. */
export function MaxJsonBytes(max: number) {
  return (object: object, propertyName: string) =>
    registerDecorator({
      name: 'maxJsonBytes',
      target: object.constructor,
      propertyName,
      constraints: [max],
      validator: {
        validate: (value: unknown) =>
          value === undefined || Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8') <= max,
        defaultMessage: (a: ValidationArguments) => `${a.property} must be at most ${max} bytes of JSON`,
      },
    });
}

/** A metadata field: a JSON object (not an array), at most METADATA_MAX_BYTES. */
export function IsMetadata() {
  return (object: object, propertyName: string) => {
    IsObject({ message: `${propertyName} must be a JSON object` })(object, propertyName);
    MaxJsonBytes(METADATA_MAX_BYTES)(object, propertyName);
  };
}
