import type { Sample } from './sampler.js';

/** How one memory series behaved over the steady-state part of the run. */
export interface Trend {
  /** Least-squares slope, MB per minute. */
  slopeMbPerMin: number;
  mean: number;
  min: number;
  max: number;
  /** Largest distance of min or max from the mean, as a fraction of the mean. */
  spread: number;
  /** spread ≤ the allowed fraction (0.10). */
  flat: boolean;
}

/** Least-squares slope of y over x (x in seconds), per minute; 0 with fewer than two points. */
export function slopePerMinute(points: { x: number; y: number }[]): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((a, p) => a + p.x, 0) / n;
  const my = points.reduce((a, p) => a + p.y, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (const p of points) {
    sxy += (p.x - mx) * (p.y - my);
    sxx += (p.x - mx) ** 2;
  }
  return sxx === 0 ? 0 : (sxy / sxx) * 60;
}

/** The trend of one field of the samples taken at or after `fromS` seconds. */
export function trend(samples: Sample[], field: 'rssMb' | 'redisUsedMb' | 'heapUsedMb', fromS: number, allowed = 0.1): Trend | undefined {
  const steady = samples.filter((s) => s.t >= fromS);
  if (steady.length < 2) return undefined;
  const ys = steady.map((s) => s[field]);
  const mean = ys.reduce((a, b) => a + b, 0) / ys.length;
  const min = Math.min(...ys);
  const max = Math.max(...ys);
  const spread = Math.max(max - mean, mean - min) / mean;
  return { slopeMbPerMin: slopePerMinute(steady.map((s) => ({ x: s.t, y: s[field] }))), mean, min, max, spread, flat: spread <= allowed };
}

export const SECTION_BEGIN = '<!-- soak:begin (written by npm run soak -- --write-benchmarks; npm run bench keeps it) -->';
export const SECTION_END = '<!-- soak:end -->';

/** `doc` with its soak section replaced by `section` (appended when it has none). */
export function withSoakSection(doc: string, section: string): string {
  const block = `${SECTION_BEGIN}\n${section.trimEnd()}\n${SECTION_END}`;
  const begin = doc.indexOf('<!-- soak:begin');
  const end = doc.indexOf(SECTION_END);
  if (begin >= 0 && end > begin) return `${doc.slice(0, begin)}${block}${doc.slice(end + SECTION_END.length)}`;
  return `${doc.trimEnd()}\n\n${block}\n`;
}

/** The soak section of `doc` with its markers, or '' when it has none. */
export function soakSectionOf(doc: string): string {
  const begin = doc.indexOf('<!-- soak:begin');
  const end = doc.indexOf(SECTION_END);
  return begin >= 0 && end > begin ? doc.slice(begin, end + SECTION_END.length) : '';
}

const f1 = (v: number) => v.toFixed(1);

/** The Markdown of a soak: what ran, the verdicts, the trends and a table of the series (one row a minute). */
export function soakMarkdown(run: {
  header: string[];
  verdicts: string[];
  trends: Record<string, Trend | undefined>;
  steadyFromS: number;
  samples: Sample[];
}): string {
  const lines = ['## Soak', '', ...run.header.map((h) => `- ${h}`), '', ...run.verdicts.map((v) => `- ${v}`), ''];
  lines.push(
    `Steady state (from ${(run.steadyFromS / 60).toFixed(1)} min, the retention window): least-squares slope, and min/max against the mean (flat: within ±10 %).`,
    '',
  );
  lines.push('| series | slope | mean | min | max | spread | flat |', '| --- | --- | --- | --- | --- | --- | --- |');
  for (const [name, t] of Object.entries(run.trends)) {
    if (!t) lines.push(`| ${name} | too few steady samples | | | | | |`);
    else
      lines.push(
        `| ${name} | ${t.slopeMbPerMin >= 0 ? '+' : ''}${t.slopeMbPerMin.toFixed(2)} MB/min | ${f1(t.mean)} MB | ${f1(t.min)} MB | ${f1(t.max)} MB | ±${(t.spread * 100).toFixed(1)} % | ${t.flat ? 'yes' : '**no**'} |`,
      );
  }
  const families = [...new Set(run.samples.flatMap((s) => Object.keys(s.families)))]
    .sort((a, b) => (run.samples.at(-1)!.families[b] ?? 0) - (run.samples.at(-1)!.families[a] ?? 0))
    .slice(0, 4);
  lines.push(
    '',
    `Series, one row a minute (the full series: \`--out FILE\`). Lag: event time → audit record, p50 / p99 of the events audited in the 10 s before the row.`,
    '',
  );
  lines.push(
    `| min | Reflex RSS | heap used | Redis used_memory | keys | ${families.map((f) => `\`${f}\``).join(' | ')} | lag p50 / p99 | events waiting | API calls | events |`,
  );
  lines.push(`| --- | --- | --- | --- | --- | ${families.map(() => '---').join(' | ')} | --- | --- | --- | --- |`);
  let nextMinute = 0;
  for (const s of run.samples) {
    if (s.t < nextMinute * 60 && s !== run.samples.at(-1)) continue;
    nextMinute = Math.floor(s.t / 60) + 1;
    lines.push(
      `| ${(s.t / 60).toFixed(1)} | ${f1(s.rssMb)} MB | ${f1(s.heapUsedMb)} MB | ${f1(s.redisUsedMb)} MB | ${s.keys} | ${families.map((f) => s.families[f] ?? 0).join(' | ')} | ${s.lag.p50} / ${s.lag.p99} ms | ${s.eventsWaiting} | ${s.apiCalls} | ${s.events} |`,
    );
  }
  return lines.join('\n');
}
