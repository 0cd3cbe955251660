/** Small helpers every part of the page's markup uses. */

const entities: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** `s` as HTML text or attribute value (null and undefined as nothing). */
export const esc = (s: unknown): string => String(s == null ? '' : s).replace(/[&<>"']/g, (c) => entities[c]!);

/** Which clock times are shown in: UTC (the default, as the logs and the audit) or the browser's own zone. */
export type TimeZoneChoice = 'utc' | 'local';
let zone: TimeZoneChoice = 'utc';

/** Sets the zone every time shown from now on is written in. */
/** The zone times are shown (and typed times read) in. */
export const zoneOf = (): TimeZoneChoice => zone;

export function setTimeZone(z: TimeZoneChoice): void {
  zone = z;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** A time (ISO or epoch ms) as `YYYY-MM-DD hh:mm:ss UTC` (or in the local zone, named); nothing for none. */
export function absolute(t: string | number | null | undefined): string {
  if (!t) return '';
  const d = new Date(t);
  if (zone === 'utc') return `${d.toISOString().replace('T', ' ').slice(0, 19)} UTC`;
  const name = new Intl.DateTimeFormat('en', { timeZoneName: 'short' }).formatToParts(d).find((p) => p.type === 'timeZoneName')?.value ?? 'local';
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())} ${name}`;
}

/** A clock time only (`19:44:05`), in the chosen zone: for "data from …". */
export function clock(t: number): string {
  const d = new Date(t);
  return zone === 'utc' ? `${d.toISOString().slice(11, 19)} UTC` : `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** How far `t` is from `now` in words: `in 364 days`, `3 min ago`, `just now`. */
export function relative(t: string | number, now = Date.now()): string {
  const ms = new Date(t).getTime() - now;
  const a = Math.abs(ms);
  const say = (n: number, unit: string) => {
    const text = `${n} ${unit}${n === 1 ? '' : 's'}`;
    return ms >= 0 ? `in ${text}` : `${text} ago`;
  };
  if (a < 5_000) return 'just now';
  if (a < 60_000) return say(Math.round(a / 1_000), 's').replace(/ss\b/, 's');
  if (a < 3_600_000) return say(Math.round(a / 60_000), 'min').replace(/mins\b/, 'min');
  if (a < 48 * 3_600_000) return say(Math.round(a / 3_600_000), 'h').replace(/hs\b/, 'h');
  return say(Math.round(a / 86_400_000), 'day');
}

/** A time as the page shows it: absolute with date and year, then relative; the ISO time as `datetime`. */
export function when(t: string | number | null | undefined): string {
  if (!t) return '';
  const iso = new Date(t).toISOString();
  return `<time datetime="${iso}">${esc(absolute(t))}</time> <small class="rel" data-rel="${iso}">(${relative(t)})</small>`;
}

/** ✔ or ✖. */
export const mark = (ok: boolean): string => (ok ? '✔' : '✖');
