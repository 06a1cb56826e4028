/** Percentiles over sparse 1 ms histograms ([ms, count][]). */
export function mergeHist(...hs: [number, number][][]): Map<number, number> {
  const out = new Map<number, number>();
  for (const h of hs) for (const [ms, n] of h) out.set(ms, (out.get(ms) ?? 0) + n);
  return out;
}

export function percentile(h: Map<number, number>, p: number): number {
  const keys = [...h.keys()].sort((a, b) => a - b);
  const total = keys.reduce((s, k) => s + h.get(k)!, 0);
  if (!total) return NaN;
  const rank = Math.ceil((p / 100) * total);
  let seen = 0;
  for (const k of keys) {
    seen += h.get(k)!;
    if (seen >= rank) return k;
  }
  return keys[keys.length - 1]!;
}

export function percentileOf(xs: number[], p: number): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}
