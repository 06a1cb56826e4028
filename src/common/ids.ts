import { v7 as uuidv7, validate, version } from 'uuid';

/** Time-ordered UUIDv7, generated in the application (PostgreSQL 15 has no uuidv7()). */
export function newId(): string {
  return uuidv7();
}

export function isUuid(value: string): boolean {
  return validate(value) && version(value) >= 1;
}

/** When a UUIDv7 was made (ms since the epoch): its first 48 bits. */
export function uuidv7Millis(id: string): number {
  return parseInt(id.replace(/-/g, '').slice(0, 12), 16);
}
