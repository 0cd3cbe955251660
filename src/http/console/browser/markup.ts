/** Small helpers every part of the page's markup uses. */

const entities: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** `s` as HTML text or attribute value (null and undefined as nothing). */
export const esc = (s: unknown): string => String(s == null ? '' : s).replace(/[&<>"']/g, (c) => entities[c]!);

/** A time (ISO or epoch ms) as `MM-DD hh:mm:ss` UTC; nothing for none. */
export const utc = (t: string | number | null | undefined): string => (t ? new Date(t).toISOString().replace('T', ' ').slice(5, 19) : '');

/** ✔ or ✖. */
export const mark = (ok: boolean): string => (ok ? '✔' : '✖');
