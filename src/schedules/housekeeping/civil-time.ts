/**
 * Calendar fields of an instant as seen in a time zone. Snapshot names and GFS buckets are both
 * about the wall clock of the schedule's zone, not UTC: a "daily" snapshot in Europe/Paris
 * belongs to the Paris day.
 */
export interface CivilTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(tz, f);
  }
  return f;
}

/** Whether `tz` is an IANA time zone this runtime knows (e.g. `Europe/Paris`, `UTC`). */
export function isTimeZone(tz: string): boolean {
  if (tz === 'UTC') return true;
  try {
    formatter(tz);
    return true;
  } catch {
    return false;
  }
}

/** The wall-clock fields of `ms` (epoch milliseconds) in `tz` (default UTC). */
export function civilTime(ms: number, tz = 'UTC'): CivilTime {
  // UTC, the default, needs no formatter: the first one loads the runtime's time-zone data (about
  // 0.1 s of CPU, a tenth of a `housekeeping plan`).
  if (tz === 'UTC') {
    const d = new Date(ms);
    return {
      year: d.getUTCFullYear(),
      month: d.getUTCMonth() + 1,
      day: d.getUTCDate(),
      hour: d.getUTCHours(),
      minute: d.getUTCMinutes(),
      second: d.getUTCSeconds(),
      millisecond: d.getUTCMilliseconds(),
    };
  }
  const parts: Record<string, number> = {};
  for (const p of formatter(tz).formatToParts(new Date(ms))) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  return {
    year: parts.year!,
    month: parts.month!,
    day: parts.day!,
    hour: parts.hour! % 24,
    minute: parts.minute!,
    second: parts.second!,
    millisecond: ((ms % 1000) + 1000) % 1000,
  };
}

/** ISO 8601 week of a civil date: the week-numbering year and the week (1–53). */
export function isoWeek(year: number, month: number, day: number): { year: number; week: number } {
  const date = Date.UTC(year, month - 1, day);
  const weekday = (new Date(date).getUTCDay() + 6) % 7; // Monday 0 … Sunday 6
  const thursday = date + (3 - weekday) * 86_400_000;
  const weekYear = new Date(thursday).getUTCFullYear();
  const week = 1 + Math.floor((thursday - Date.UTC(weekYear, 0, 1)) / (7 * 86_400_000));
  return { year: weekYear, week };
}
