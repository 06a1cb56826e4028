import type { Span } from './fold';

export const MASK = '***';
export const EXCERPT_MAX_CHARS = 100;

/** Sorted, with overlapping or touching spans joined (two adjacent matches become one `***`). */
export function mergeSpans(spans: readonly Span[]): Span[] {
  const sorted = spans.filter((s) => s.end > s.start).sort((a, b) => a.start - b.start || b.end - a.end);
  const out: Span[] = [];
  for (const s of sorted) {
    const last = out[out.length - 1];
    if (last && s.start <= last.end) last.end = Math.max(last.end, s.end);
    else out.push({ ...s });
  }
  return out;
}

/** Each matched span replaced by `***`. */
export function maskSpans(content: string, spans: readonly Span[]): string {
  let out = '';
  let at = 0;
  for (const s of mergeSpans(spans)) {
    out += content.slice(at, s.start) + MASK;
    at = s.end;
  }
  return out + content.slice(at);
}

/**
 * A short piece of the original text around a match, at most 100 characters (code points, never a
 * split surrogate pair), with `…` where it was cut and whitespace runs shown as one space.
 */
export function excerptAround(content: string, span: Span, max = EXCERPT_MAX_CHARS): string {
  const chars = Array.from(content);
  if (chars.length <= max) return squeeze(content);
  const start = Array.from(content.slice(0, span.start)).length;
  const end = Math.min(start + Array.from(content.slice(span.start, span.end)).length, chars.length);
  const room = max - 2; // both ellipses, in the worst case
  const matchLength = Math.min(end - start, room);
  let from = Math.max(0, start - Math.floor((room - matchLength) / 2));
  const to = Math.min(chars.length, from + room);
  from = Math.max(0, to - room);
  return `${from > 0 ? '…' : ''}${squeeze(chars.slice(from, to).join(''))}${to < chars.length ? '…' : ''}`;
}

function squeeze(s: string): string {
  return s.replace(/\s+/g, ' ');
}
