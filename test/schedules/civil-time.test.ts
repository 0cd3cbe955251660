import { expect, it } from 'vitest';
import { civilTime, isTimeZone } from '../../src/schedules/housekeeping/civil-time.js';

it('reads UTC without a formatter, field for field as the formatter reads Etc/UTC', () => {
  const instants = [
    Date.UTC(2026, 0, 1, 0, 0, 0, 0),
    Date.UTC(2025, 11, 31, 23, 59, 59, 999),
    Date.UTC(2028, 1, 29, 12, 30, 15, 250), // a leap day
    Date.UTC(1969, 11, 31, 23, 59, 59, 500), // before the epoch
    Date.UTC(2026, 2, 29, 1, 0, 0, 1), // Europe's change to summer time, in UTC
  ];
  for (let ms = Date.UTC(2026, 0, 1); ms < Date.UTC(2027, 0, 1); ms += 7 * 3_600_000 + 1_234) instants.push(ms);
  for (const ms of instants) expect(civilTime(ms, 'UTC'), new Date(ms).toISOString()).toEqual(civilTime(ms, 'Etc/UTC'));
  expect(civilTime(Date.UTC(2026, 10, 26, 18, 7, 9, 42))).toEqual({
    year: 2026,
    month: 11,
    day: 26,
    hour: 18,
    minute: 7,
    second: 9,
    millisecond: 42,
  });
});

it('knows UTC and IANA zones, and refuses a zone the runtime does not know', () => {
  expect([isTimeZone('UTC'), isTimeZone('Europe/Paris'), isTimeZone('Mars/Olympus')]).toEqual([true, true, false]);
  expect(civilTime(Date.UTC(2026, 6, 1, 22, 0), 'Europe/Paris')).toMatchObject({ month: 7, day: 2, hour: 0 });
});
