import { floodFingerprint } from './flood';

describe('flood fingerprint', () => {
  it('is the same for texts that differ only in case, width, spacing and invisible characters', () => {
    const a = floodFingerprint('Buy NOW at my shop');
    expect(floodFingerprint('buy now at my shop')).toBe(a);
    expect(floodFingerprint('  buy   now\nat my ｓｈｏｐ ')).toBe(a);
    expect(floodFingerprint('buy n\u200bow at my shop')).toBe(a);
    expect(floodFingerprint('buy now at my shop!')).not.toBe(a);
  });

  it('is null without text', () => {
    expect(floodFingerprint('')).toBeNull();
    expect(floodFingerprint(' \n ')).toBeNull();
  });
});
