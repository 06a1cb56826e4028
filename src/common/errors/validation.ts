import { ValidationError, ValidationPipe } from '@nestjs/common';
import { AppError, ErrorDetail } from './app-error';

function flatten(errors: ValidationError[], prefix = ''): ErrorDetail[] {
  const out: ErrorDetail[] = [];
  for (const e of errors) {
    const field = prefix
      ? /^\d+$/.test(e.property)
        ? `${prefix}[${e.property}]`
        : `${prefix}.${e.property}`
      : e.property;
    for (const message of Object.values(e.constraints ?? {})) out.push({ field, message });
    if (e.children?.length) out.push(...flatten(e.children, field));
  }
  return out;
}

export function validationErrorFrom(errors: ValidationError[]): AppError {
  const details = flatten(errors);
  const first = details[0];
  return new AppError(
    'VALIDATION_ERROR',
    first ? `${first.field}: ${first.message}` : 'The request is invalid',
    details,
  );
}

/** whitelist + forbidNonWhitelisted: unknown fields are a 400, never silently dropped. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    exceptionFactory: validationErrorFrom,
  });
}
