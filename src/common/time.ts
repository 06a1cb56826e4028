/** RFC 3339 UTC with milliseconds, as CONTRACT §1 asks. */
export function iso(d: Date | string | null | undefined): string | null {
  if (d === null || d === undefined) return null;
  return (d instanceof Date ? d : new Date(d)).toISOString();
}

export function isoNotNull(d: Date | string): string {
  return (d instanceof Date ? d : new Date(d)).toISOString();
}
