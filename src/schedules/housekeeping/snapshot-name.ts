import { civilTime } from './civil-time.js';

/**
 * Snapshot names made from a pattern and the tick's time, and the test that recognises them.
 * Tokens: `%Y` year, `%m` month, `%d` day, `%H` hour, `%M` minute, `%S` second, `%L`
 * milliseconds, `%s` epoch seconds, `%%` a percent sign. Everything else is literal.
 *
 * The name comes from the tick's scheduled time, not the wall clock. A wall-clock name repeats
 * itself when clocks go back (Europe/Paris: 02:00 twice on the last Sunday of October), and the
 * daemon refuses `+` in snapshot names, so no offset can be written the ISO way:
 * {@link uniqueSnapshotName} adds a suffix instead, so no tick is lost to a name.
 */

const tokenPattern = /%([YmdHMSLs%])/g;

const tokenRegex: Record<string, string> = {
  Y: '\\d{4}',
  m: '\\d{2}',
  d: '\\d{2}',
  H: '\\d{2}',
  M: '\\d{2}',
  S: '\\d{2}',
  L: '\\d{3}',
  s: '\\d+',
  '%': '%',
};

/** Why a name pattern cannot be used, or undefined when it can. */
export function namePatternProblem(pattern: string): string | undefined {
  if (pattern === '') return 'is empty';
  if (pattern.includes('/')) return 'may not contain "/" (the daemon refuses it in snapshot names)';
  if (/\s/.test(pattern)) return 'may not contain spaces';
  const stray = pattern.replace(tokenPattern, '').match(/%./);
  if (stray) return `has an unknown token ${stray[0]} (known: %Y %m %d %H %M %S %L %s %%)`;
  if (!/%[YmdHMSLs]/.test(pattern)) return 'has no time token, so every tick would ask for the same name';
  return undefined;
}

/** The name for a snapshot taken at `at` (epoch ms), with the wall clock of `tz` (default UTC). */
export function formatSnapshotName(pattern: string, at: number, tz = 'UTC'): string {
  const t = civilTime(at, tz);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return pattern.replace(tokenPattern, (_, token: string) => {
    switch (token) {
      case 'Y':
        return pad(t.year, 4);
      case 'm':
        return pad(t.month);
      case 'd':
        return pad(t.day);
      case 'H':
        return pad(t.hour);
      case 'M':
        return pad(t.minute);
      case 'S':
        return pad(t.second);
      case 'L':
        return pad(t.millisecond, 3);
      case 's':
        return String(Math.floor(at / 1000));
      default:
        return '%';
    }
  });
}

/**
 * `base` when no snapshot (and no name Reflex has reserved) is called that, else `base-2`,
 * `base-3`…: a manual snapshot that happens to have the name of the next tick is never taken for
 * Reflex's, and a wall-clock hour that repeats still gets its own snapshot.
 */
export function uniqueSnapshotName(base: string, taken: (name: string) => boolean): string {
  if (!taken(base)) return base;
  for (let n = 2; ; n++) if (!taken(`${base}-${n}`)) return `${base}-${n}`;
}

/**
 * A predicate that is true for exactly the names `pattern` can produce (anchored), with or
 * without the suffix {@link uniqueSnapshotName} adds. It tells which snapshots *look* like a
 * schedule's; whose they are is the ledger's to say (schedules/snapshot-ledger.ts).
 */
export function snapshotNameMatcher(pattern: string): (name: string) => boolean {
  let source = '';
  let last = 0;
  for (const m of pattern.matchAll(tokenPattern)) {
    source += escapeRegex(pattern.slice(last, m.index)) + tokenRegex[m[1]!]!;
    last = m.index + m[0].length;
  }
  source += escapeRegex(pattern.slice(last));
  const re = new RegExp(`^${source}(?:-\\d+)?$`);
  return (name) => re.test(name);
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
