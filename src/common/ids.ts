import { v7 as uuidv7, validate, version } from 'uuid';

/** Time-ordered UUIDv7, generated in the application (PostgreSQL 15 has no uuidv7()). */
export function newId(): string {
  return uuidv7();
}

export function isUuid(value: string): boolean {
  return validate(value) && version(value) >= 1;
}
