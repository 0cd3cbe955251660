import type { Plots } from './console-wire.js';
import { absolute, esc } from './markup.js';

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

/** Incidents, remediations and housekeeping runs per time bucket, as inline SVG bar triples with an axis and a legend. */
export function timeline(p: Plots): string {
  const w = 600;
  const h = 150;
  const base = 120;
  const bw = (w - 40) / p.timeline.length;
  const max = Math.max(1, ...p.timeline.map((b) => Math.max(b.incidents, b.remediations, b.housekeeping)));
  const y = (v: number) => (v / max) * (base - 10);
  const bar = (cls: string, x: number, v: number) =>
    v
      ? `<rect class="${cls}" x="${x.toFixed(1)}" y="${(base - y(v)).toFixed(1)}" width="${(bw / 3 - 0.4).toFixed(1)}" height="${y(v).toFixed(1)}"></rect>`
      : '';
  const triples = p.timeline.map((b, k) => {
    const x = 30 + k * bw;
    const title = esc(`${absolute(b.start)}: ${b.incidents} incident(s), ${b.remediations} remediation(s), ${b.housekeeping} housekeeping run(s)`);
    return `<g><title>${title}</title>${bar('i', x, b.incidents)}${bar('r', x + bw / 3, b.remediations)}${bar('k', x + (2 * bw) / 3, b.housekeeping)}</g>`;
  });
  const sum = (f: (b: Plots['timeline'][number]) => number) => p.timeline.reduce((a, b) => a + f(b), 0);
  const ti = sum((b) => b.incidents);
  const tr = sum((b) => b.remediations);
  const tk = sum((b) => b.housekeeping);
  const axis =
    `<line x1="30" y1="${base}" x2="${w - 10}" y2="${base}"></line><text x="0" y="14">${max}</text>` +
    `<text x="30" y="${base + 16}">${esc(absolute(p.from))}</text><text x="${w - 10}" y="${base + 16}" text-anchor="end">${esc(absolute(p.to))}</text>` +
    `<rect class="i" x="30" y="${base + 24}" width="10" height="8"></rect><text x="44" y="${base + 32}">incidents (■ red)</text>` +
    `<rect class="r" x="170" y="${base + 24}" width="10" height="8"></rect><text x="184" y="${base + 32}">remediations (■ green)</text>` +
    `<rect class="k" x="340" y="${base + 24}" width="10" height="8"></rect><text x="354" y="${base + 32}">housekeeping (■ grey)</text>`;
  const caption =
    `<b>Timeline</b> <small>${ti} incident(s), ${tr} remediation(s), ${tk} housekeeping run(s); ` +
    `one bar triple per ${Math.round(p.bucketMs / 60000)} min</small>`;
  const label = `Timeline: ${ti} incidents, ${tr} remediations and ${tk} housekeeping runs between ${esc(absolute(p.from))} and ${esc(absolute(p.to))}`;
  // Drag across it to zoom the range (console-app.ts): the plot's x from 30 to w - 10 spans from..to.
  return (
    `<figure><figcaption>${caption} <small>(drag across to zoom)</small></figcaption><svg id="zoom-plot" role="img" aria-label="${label}" viewBox="0 0 ${w} ${h + 20}" ` +
    `data-from="${esc(p.from)}" data-to="${esc(p.to)}">${triples.join('')}${axis}<rect id="zoom-select" class="sel" x="0" y="0" width="0" height="${base}"></rect></svg></figure>`
  );
}
