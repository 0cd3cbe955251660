import { describe, expect, it } from 'vitest';
import { parseTimeArg, streamRange } from '../../src/audit/audit-query.js';

describe('audit time ranges', () => {
  const now = Date.parse('2024-05-01T12:00:00Z');

  it('reads durations back from now and ISO timestamps', () => {
    expect(parseTimeArg('15m', now)?.toISOString()).toBe('2024-05-01T11:45:00.000Z');
    expect(parseTimeArg('24h', now)?.toISOString()).toBe('2024-04-30T12:00:00.000Z');
    expect(parseTimeArg('1h30m', now)?.toISOString()).toBe('2024-05-01T10:30:00.000Z');
    expect(parseTimeArg('2024-04-01T00:00:00Z', now)?.toISOString()).toBe('2024-04-01T00:00:00.000Z');
    for (const bad of ['yesterday', '15', 'm15', '2024-13-45']) expect(parseTimeArg(bad, now), bad).toBeUndefined();
  });

  it('maps time bounds to stream ids, so older records are never scanned', () => {
    expect(streamRange({})).toEqual({ start: '-', end: '+' });
    expect(streamRange({ since: new Date(now), until: new Date(now + 1000) })).toEqual({
      start: `${now}-0`,
      end: `${now + 1000}-18446744073709551615`,
    });
    expect(streamRange({ since: new Date(now), endId: `${now + 5}-3` })).toEqual({ start: `${now}-0`, end: `${now + 5}-3` });
    expect(streamRange({ until: new Date(now), endId: `${now + 5}-3` }).end).toBe(`${now}-18446744073709551615`);
  });
});
