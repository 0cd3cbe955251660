import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatSnapshotName, namePatternProblem, snapshotNameMatcher } from '../../src/schedules/housekeeping/snapshot-name.js';

describe('snapshot names', () => {
  it('formats the tick time in the schedule time zone', () => {
    const t = Date.UTC(2024, 2, 5, 23, 4, 5, 67);
    expect(formatSnapshotName('auto-%Y%m%d-%H%M%S', t)).toBe('auto-20240305-230405');
    expect(formatSnapshotName('auto-%Y%m%d-%H%M%S', t, 'Europe/Paris')).toBe('auto-20240306-000405');
    expect(formatSnapshotName('x-%s.%L-100%%', t)).toBe(`x-${Math.floor(t / 1000)}.067-100%`);
  });

  it('recognises exactly what the pattern produces', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 4_102_444_800_000 }),
        fc.constantFrom('auto-%Y%m%d-%H%M%S', 'daily.%Y-%m-%d', 'h+%s', 'n-%L'),
        (t, pattern) => {
          expect(snapshotNameMatcher(pattern)(formatSnapshotName(pattern, t))).toBe(true);
        },
      ),
    );
    const owned = snapshotNameMatcher('auto-%Y%m%d-%H%M%S');
    expect(owned('auto-20240305-230405')).toBe(true);
    expect(owned('auto-20240305-230405-copy')).toBe(false);
    expect(owned('snap0')).toBe(false);
    expect(snapshotNameMatcher('a.%s')('aX123')).toBe(false);
  });

  it('rejects patterns the daemon or the schedule cannot use', () => {
    expect(namePatternProblem('auto-%Y%m%d')).toBeUndefined();
    expect(namePatternProblem('a/%s')).toMatch(/"\/"/);
    expect(namePatternProblem('fixed')).toMatch(/no time token/);
    expect(namePatternProblem('a-%q')).toMatch(/unknown token %q/);
  });
});
