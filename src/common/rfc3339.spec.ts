import { parseRfc3339 } from './rfc3339';

describe('parseRfc3339', () => {
  it('normalises to UTC with microseconds and keeps the precision it was written with', () => {
    expect(parseRfc3339('2026-11-21T10:00:00.123Z')).toEqual({
      utc: '2026-11-21T10:00:00.123000Z',
      unitMicros: 1000,
    });
    expect(parseRfc3339('2026-11-21T10:00:00Z')).toEqual({
      utc: '2026-11-21T10:00:00.000000Z',
      unitMicros: 1_000_000,
    });
    expect(parseRfc3339('2026-11-21t10:00:00.1234567z')).toEqual({
      utc: '2026-11-21T10:00:00.123456Z',
      unitMicros: 1,
    });
    expect(parseRfc3339('2026-11-21T11:30:00+01:30')?.utc).toBe('2026-11-21T10:00:00.000000Z');
    expect(parseRfc3339('2026-01-01T00:30:00+01:00')?.utc).toBe('2025-12-31T23:30:00.000000Z');
    expect(parseRfc3339('2024-02-29 23:00:00-02:00')?.utc).toBe('2024-03-01T01:00:00.000000Z');
    expect(parseRfc3339('0001-01-01T00:00:00Z')?.utc).toBe('0001-01-01T00:00:00.000000Z');
  });

  it('refuses what is not a real instant', () => {
    for (const bad of [
      '',
      'yesterday',
      '2026-11-21',
      '2026-11-21T10:00Z',
      '2026-11-21T10:00:00',
      '2026-02-29T00:00:00Z',
      '2026-02-31T00:00:00Z',
      '2026-13-01T00:00:00Z',
      '2026-00-10T00:00:00Z',
      '2026-01-00T00:00:00Z',
      '2026-01-01T24:00:00Z',
      '2026-01-01T00:60:00Z',
      '2026-01-01T00:00:60Z',
      '2026-01-01T00:00:00+24:00',
      '0000-01-01T00:00:00Z',
      '0001-01-01T00:30:00+01:00',
      '+2026-01-01T00:00:00Z',
      '2026-01-01T00:00:00.Z',
    ]) {
      expect(parseRfc3339(bad)).toBeNull();
    }
  });
});
