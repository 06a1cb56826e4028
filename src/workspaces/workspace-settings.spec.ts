import { deepMerge, defaultSettings, effectiveSettings } from './workspace-settings';

describe('deepMerge', () => {
  it('merges objects key by key, recursively', () => {
    expect(deepMerge({ a: 1, b: { c: 2, d: 3 } }, { b: { d: 4 }, e: 5 })).toEqual({
      a: 1,
      b: { c: 2, d: 4 },
      e: 5,
    });
  });

  it('replaces arrays instead of concatenating them', () => {
    expect(deepMerge({ list: [1, 2, 3] }, { list: [9] })).toEqual({ list: [9] });
    expect(deepMerge({ list: [1] }, { list: [] })).toEqual({ list: [] });
  });

  it('skips undefined values and keeps the base when the patch is undefined', () => {
    expect(deepMerge({ a: 1 }, { a: undefined })).toEqual({ a: 1 });
    expect(deepMerge({ a: 1 }, undefined)).toEqual({ a: 1 });
  });

  it('lets a scalar replace an object and an object replace a scalar', () => {
    expect(deepMerge({ a: { b: 1 } }, { a: 2 })).toEqual({ a: 2 });
    expect(deepMerge({ a: 2 }, { a: { b: 1 } })).toEqual({ a: { b: 1 } });
  });

  it('does not mutate its inputs', () => {
    const base = { a: { b: 1 } };
    const patch = { a: { c: 2 } };
    const out = deepMerge(base, patch);
    expect(base).toEqual({ a: { b: 1 } });
    expect(patch).toEqual({ a: { c: 2 } });
    expect(out).toEqual({ a: { b: 1, c: 2 } });
    expect(out.a).not.toBe(base.a);
  });

  it('ignores nothing else: false, 0 and empty strings are real values', () => {
    expect(deepMerge({ a: true, b: 5, c: 'x' }, { a: false, b: 0, c: '' })).toEqual({
      a: false,
      b: 0,
      c: '',
    });
  });
});

describe('effectiveSettings', () => {
  it('is the defaults when nothing is stored', () => {
    expect(effectiveSettings({})).toEqual(defaultSettings());
    expect(effectiveSettings(null)).toEqual(defaultSettings());
    expect(effectiveSettings(undefined)).toEqual(defaultSettings());
  });

  it('lays stored overrides over the defaults, moderation included', () => {
    const s = effectiveSettings({
      read_receipts_enabled: false,
      moderation: { action: 'reject', flood: { max_repeats: 9 } },
    });
    expect(s.read_receipts_enabled).toBe(false);
    expect(s.moderation.action).toBe('reject');
    expect(s.moderation.flood).toEqual({ max_repeats: 9, window_seconds: 30 });
    expect(s.moderation.rules).toEqual(['profanity', 'link', 'phone', 'flood']);
    expect(s.moderation.auto_mute.duration_seconds).toBe(900);
  });

  it('hands out a fresh defaults object each time', () => {
    const a = defaultSettings();
    a.moderation.rules.push('flood');
    expect(defaultSettings().moderation.rules).toHaveLength(4);
  });
});
