import { decodeTimeIdCursor, encodeCursor } from './pagination';
import { isExactTime } from './keyset';

describe('cursor times', () => {
  it('takes exactTime() renderings of real instants only', () => {
    expect(isExactTime('2026-11-30T05:59:35.123456Z')).toBe(true);
    expect(isExactTime('2026-13-45T99:99:99.000000Z')).toBe(false); // the shape, not an instant
    expect(isExactTime('2026-02-29T00:00:00.000000Z')).toBe(false);
    expect(isExactTime('2026-11-30T05:59:35.123Z')).toBe(false);
  });

  it('refuses a forged cursor with a 400, before any SQL', () => {
    const forged = encodeCursor(['2026-13-45T99:99:99.000000Z', '0190d5a8-0000-7000-8000-000000000000']);
    expect(() => decodeTimeIdCursor(forged)).toThrow(expect.objectContaining({ code: 'VALIDATION_ERROR' }));
  });
});
