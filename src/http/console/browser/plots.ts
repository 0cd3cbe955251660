import type { Plots } from './console-wire.js';
import { esc, utc } from './markup.js';

/** One bar of {@link bars}. */
export interface Bar {
  label: string;
  value: number;
}

/** A horizontal bar chart as inline SVG; `color` is the bars' class (`h`, `i`, `r`). */
export function bars(title: string, items: Bar[], color: string): string {
  const h = 18;
  const w = 420;
  const labelW = 120;
  const max = Math.max(1, ...items.map((x) => x.value));
  const length = (x: Bar) => (x.value / max) * (w - labelW - 40);
  const rows = items.map((x, k) => {
    const name = x.label.length > 18 ? `${x.label.slice(0, 17)}…` : x.label;
    return (
      `<g><title>${esc(`${x.label}: ${x.value}`)}</title><text x="0" y="${k * h + 13}">${esc(name)}</text>` +
      `<rect class="${color}" x="${labelW}" y="${k * h + 3}" height="${h - 6}" width="${Math.max(x.value ? 2 : 0, length(x))}"></rect>` +
      `<text x="${labelW + 4 + length(x)}" y="${k * h + 13}">${x.value}</text></g>`
    );
  });
  const label = esc(`${title}: ${items.map((x) => `${x.label} ${x.value}`).join(', ')}`);
  return `<figure><figcaption><b>${esc(title)}</b></figcaption><svg role="img" aria-label="${label}" viewBox="0 0 ${w} ${Math.max(h, items.length * h)}">${rows.join('')}</svg></figure>`;
}

/** Incidents and remediations per time bucket, as inline SVG bar pairs with an axis and a legend. */
export function timeline(p: Plots): string {
  const w = 600;
  const h = 150;
  const base = 120;
  const bw = (w - 40) / p.timeline.length;
  const max = Math.max(1, ...p.timeline.map((b) => Math.max(b.incidents, b.remediations)));
  const y = (v: number) => (v / max) * (base - 10);
  const bar = (cls: string, x: number, v: number) =>
    v
      ? `<rect class="${cls}" x="${x.toFixed(1)}" y="${(base - y(v)).toFixed(1)}" width="${(bw / 2 - 0.5).toFixed(1)}" height="${y(v).toFixed(1)}"></rect>`
      : '';
  const pairs = p.timeline.map((b, k) => {
    const x = 30 + k * bw;
    const title = esc(`${utc(b.start)}: ${b.incidents} incident(s), ${b.remediations} remediation(s)`);
    return `<g><title>${title}</title>${bar('i', x, b.incidents)}${bar('r', x + bw / 2, b.remediations)}</g>`;
  });
  const ti = p.timeline.reduce((a, b) => a + b.incidents, 0);
  const tr = p.timeline.reduce((a, b) => a + b.remediations, 0);
  const axis =
    `<line x1="30" y1="${base}" x2="${w - 10}" y2="${base}"></line><text x="0" y="14">${max}</text>` +
    `<text x="30" y="${base + 16}">${utc(p.from)}</text><text x="${w - 10}" y="${base + 16}" text-anchor="end">${utc(p.to)}</text>` +
    `<rect class="i" x="30" y="${base + 24}" width="10" height="8"></rect><text x="44" y="${base + 32}">incidents (■ red)</text>` +
    `<rect class="r" x="170" y="${base + 24}" width="10" height="8"></rect><text x="184" y="${base + 32}">remediations (■ green)</text>`;
  const caption = `<b>Timeline</b> <small>${ti} incident(s), ${tr} remediation(s); one bar pair per ${Math.round(p.bucketMs / 60000)} min</small>`;
  const label = `Timeline: ${ti} incidents and ${tr} remediations between ${esc(utc(p.from))} and ${esc(utc(p.to))}`;
  return `<figure><figcaption>${caption}</figcaption><svg role="img" aria-label="${label}" viewBox="0 0 ${w} ${h + 20}">${pairs.join('')}${axis}</svg></figure>`;
}
