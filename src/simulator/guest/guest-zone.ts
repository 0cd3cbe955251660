/**
 * The guest's local time, as glibc's tzset reads `TZ` in the beds' busybox image, which has no
 * `/usr/share/zoneinfo` and no `/etc/localtime`: every zone is a POSIX `TZ` string
 * (`std offset [dst [offset] [,rule,rule]]`), read as glibc 2.36's `__tzset_parse_tz` reads it,
 * its changes computed as its `compute_change` computes them. `TZ` unset is UTC named `UTC`, `TZ=`
 * is `Universal`, a leading `:` is dropped (the file it names is not there); a name glibc cannot
 * read (fewer than 3 letters) is empty, and a missing offset is 0 (`TZ=Europe/Paris` is `Europe`,
 * UTC). A zone is named by its string; nothing here reads the guest's files.
 */

/** When a zone's standard or daylight time starts, in the year asked for. */
interface Rule {
  /** `J1` is `Jn` (1–365, no Feb 29), `J0` is `n` (0–365), `M` is `Mm.n.d`. */
  type: 'J0' | 'J1' | 'M';
  d: number;
  m: number;
  n: number;
  /** The time of day of the change, in seconds of the time in force before it. */
  secs: number;
}

interface Side {
  name: string;
  /** Seconds east of UTC (glibc's tm_gmtoff). */
  offset: number;
  rule: Rule;
}

/** A zone's name and offset at one moment. */
export interface ZoneTime {
  name: string;
  /** Seconds east of UTC. */
  offset: number;
}

export interface Zone {
  /** The zone's name and offset at `seconds` past the epoch. */
  at(seconds: number): ZoneTime;
  /** The moment whose local time, written as UTC fields, is `localSeconds` (glibc's mktime with tm_isdst -1: which of two an ambiguous hour gives is the one its first guess finds). */
  fromLocal(localSeconds: number): number;
}

const day = 86_400;
const cumulativeDays = [
  [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365],
  [0, 31, 60, 91, 121, 152, 182, 213, 244, 274, 305, 335, 366],
];
const isLeap = (y: number) => y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);

/** glibc's `%hu%n:%hu%n:%hu%n`: up to three numbers, and where the text read ends. */
function clock(text: string, at: number): { parts: number[]; end: number } {
  const parts: number[] = [];
  let end = at;
  let i = at;
  while (parts.length < 3) {
    if (parts.length > 0) {
      if (text[i] !== ':') break;
      i++;
    }
    const digits = /^\d+/.exec(text.slice(i))?.[0];
    if (!digits) break;
    parts.push(Number(digits) % 65_536);
    i += digits.length;
    end = i;
  }
  return { parts, end };
}

const zeroRule = (): Rule => ({ type: 'J0', d: 0, m: 0, n: 0, secs: 0 });

/** glibc's `__tzset_parse_tz` over a POSIX `TZ` string. */
function parse(tz: string): [Side, Side] {
  const std: Side = { name: '', offset: 0, rule: zeroRule() };
  const dst: Side = { name: '', offset: 0, rule: zeroRule() };
  let at = 0;
  const name = (side: Side): boolean => {
    let text: string | undefined;
    if (tz[at] === '<') {
      const quoted = /^<([A-Za-z0-9+-]*)>/.exec(tz.slice(at));
      if (!quoted) return false;
      text = quoted[1]!;
      if (text.length < 3) return false;
      at += quoted[0].length;
    } else {
      text = /^[A-Za-z]*/.exec(tz.slice(at))![0];
      if (text.length < 3) return false;
      at += text.length;
    }
    side.name = text;
    return true;
  };
  const offset = (side: Side, which: 0 | 1): boolean => {
    const c = tz[at];
    if (which === 0 && (c === undefined || (c !== '+' && c !== '-' && !/\d/.test(c)))) return false;
    let sign = -1;
    if (c === '+' || c === '-') {
      sign = c === '-' ? 1 : -1;
      at++;
    }
    const { parts, end } = clock(tz, at);
    if (parts.length === 0) {
      if (which === 0) return false;
      side.offset = std.offset + 3600;
      return true;
    }
    const [hh, mm = 0, ss = 0] = parts as [number, number?, number?];
    side.offset = sign * (Math.min(ss, 59) + Math.min(mm, 59) * 60 + Math.min(hh, 24) * 3600);
    at = end;
    return true;
  };
  const rule = (side: Side, which: 0 | 1): boolean => {
    if (tz[at] === ',') at++;
    const r = side.rule;
    const c = tz[at];
    if (c === 'J' || (c !== undefined && /\d/.test(c))) {
      r.type = c === 'J' ? 'J1' : 'J0';
      if (r.type === 'J1' && !/\d/.test(tz[++at] ?? '')) return false;
      const digits = /^\d+/.exec(tz.slice(at))?.[0];
      if (!digits || Number(digits) > 365 || (r.type === 'J1' && Number(digits) === 0)) return false;
      r.d = Number(digits);
      at += digits.length;
    } else if (c === 'M') {
      const m = /^M(\d+)\.(\d+)\.(\d+)/.exec(tz.slice(at));
      if (!m) return false;
      [r.m, r.n, r.d] = [Number(m[1]) % 65_536, Number(m[2]) % 65_536, Number(m[3]) % 65_536];
      r.type = 'M';
      if (r.m < 1 || r.m > 12 || r.n < 1 || r.n > 5 || r.d > 6) return false;
      at += m[0].length;
    } else if (c === undefined) {
      // The US rules of 2005, glibc's default: M3.2.0,M11.1.0.
      Object.assign(r, which === 0 ? { type: 'M', m: 3, n: 2, d: 0 } : { type: 'M', m: 11, n: 1, d: 0 });
    } else return false;
    if (tz[at] !== undefined && tz[at] !== '/' && tz[at] !== ',') return false;
    if (tz[at] === '/') {
      at++;
      if (tz[at] === undefined) return false;
      const negative = tz[at] === '-';
      if (negative) at++;
      const { parts, end } = clock(tz, at);
      const [hh = 2, mm = 0, ss = 0] = parts;
      at = end;
      r.secs = (negative ? -1 : 1) * (hh * 3600 + mm * 60 + ss);
    } else r.secs = 2 * 3600;
    return true;
  };
  if (name(std) && offset(std, 0)) {
    if (at < tz.length) {
      if (name(dst)) {
        offset(dst, 1);
        // No rule file stands in for a missing rule here (no `posixrules`): glibc's default rules.
      }
      if (rule(std, 0)) rule(dst, 1);
    } else {
      dst.name = std.name;
      dst.offset = std.offset;
    }
  }
  return [std, dst];
}

/** glibc's `compute_change`: the moment `side`'s time starts in `year`. */
function change(side: Side, year: number): number {
  const r = side.rule;
  let t = 0;
  if (year > 1970) {
    const y = year - 1;
    t = ((year - 1970) * 365 + (Math.floor(y / 4) - 492) - (Math.floor(y / 100) - 19) + (Math.floor(y / 400) - 4)) * day;
  }
  if (r.type === 'J1') t += (r.d - 1) * day + (r.d >= 60 && isLeap(year) ? day : 0);
  else if (r.type === 'J0') t += r.d * day;
  else {
    const days = cumulativeDays[isLeap(year) ? 1 : 0]!;
    t += days[r.m - 1]! * day;
    // Zeller's congruence: the weekday of the month's first day.
    const m1 = ((r.m + 9) % 12) + 1;
    const yy0 = r.m <= 2 ? year - 1 : year;
    const yy1 = Math.trunc(yy0 / 100);
    const yy2 = yy0 % 100;
    let dow = (Math.trunc((26 * m1 - 2) / 10) + 1 + yy2 + Math.trunc(yy2 / 4) + Math.trunc(yy1 / 4) - 2 * yy1) % 7;
    if (dow < 0) dow += 7;
    let d = r.d - dow;
    if (d < 0) d += 7;
    for (let i = 1; i < r.n; i++) {
      if (d + 7 >= days[r.m]! - days[r.m - 1]!) break;
      d += 7;
    }
    t += d * day;
  }
  return t - side.offset + r.secs;
}

const utc: Zone = { at: () => ({ name: 'UTC', offset: 0 }), fromLocal: (s) => s };
const cache = new Map<string, Zone>();

/** The zone `TZ` names (undefined: unset). */
export function guestZone(tz: string | undefined): Zone {
  if (tz === undefined) return utc;
  let zone = cache.get(tz);
  if (zone) return zone;
  const text = tz === '' ? 'Universal' : tz.startsWith(':') ? tz.slice(1) : tz;
  if (text === '' || text === '/etc/localtime') zone = utc;
  else {
    const [std, dst] = parse(text);
    const at = (seconds: number): ZoneTime => {
      const year = new Date(seconds * 1000).getUTCFullYear();
      const starts = change(std, year);
      const ends = change(dst, year);
      const isDst = starts > ends ? seconds < ends || seconds >= starts : seconds >= starts && seconds < ends;
      const side = isDst ? dst : std;
      return { name: side.name, offset: side.offset };
    };
    zone = {
      at,
      fromLocal: (local) => {
        const guess = at(local).offset;
        const first = at(local - guess).offset;
        if (first === guess) return local - guess;
        const second = at(local - first).offset;
        if (second === first) return local - first;
        // A time in the gap a change to daylight time leaves: read with the offset before the gap, as glibc's mktime does.
        return Math.max(local - guess, local - first);
      },
    };
  }
  if (cache.size > 64) cache.clear();
  cache.set(tz, zone);
  return zone;
}

/** `+hhmm` / `-hhmm` as strftime's `%z` writes an offset. */
export function offsetText(offset: number): string {
  const a = Math.abs(offset);
  return `${offset < 0 ? '-' : '+'}${String(Math.floor(a / 3600)).padStart(2, '0')}${String(Math.floor((a % 3600) / 60)).padStart(2, '0')}`;
}

/** The zone of a program's environment: the `TZ` the shell exported to it. */
export function zoneOf(ctx: { exportedEnv?: Record<string, string> }): Zone {
  return guestZone(ctx.exportedEnv?.TZ);
}

/** The local time of `ms` (milliseconds past the epoch) in `zone`, its fields written as UTC's, and the zone's offset then. */
export function localTime(zone: Zone, ms: number): { local: Date; offset: number } {
  const { offset } = zone.at(Math.floor(ms / 1000));
  return { local: new Date(ms + offset * 1000), offset };
}

/** The moment whose local time in `zone` has the fields `local` has as UTC's (mktime, {@link Zone.fromLocal}). */
export function fromLocal(zone: Zone, local: Date): Date {
  return new Date(zone.fromLocal(local.getTime() / 1000) * 1000);
}

/** `2026-12-03 08:08:03`: the local time of `ms` in `zone` as busybox's listings write it (tar tv, cpio -tv, ls --full-time, stat). */
export function stampText(zone: Zone, ms: number): string {
  const iso = localTime(zone, ms).local.toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
}

/** {@link stampText} with `fraction` after the seconds and the zone's offset then: `ls --full-time`'s and `stat`'s times. */
export function stampWithOffset(zone: Zone, ms: number, fraction = ''): string {
  return `${stampText(zone, ms)}${fraction} ${offsetText(zone.at(Math.floor(ms / 1000)).offset)}`;
}
