import type { StoredAuditRecord } from '../audit/audit-log.js';
import type { Silence } from '../rules/silences.js';

/** What the dashboard page shows. */
export interface DashboardView {
  /** The target(s) this deployment watches. */
  target: string;
  /** Where the bull-board queues UI lives. */
  queuesPath: string;
  silences: Silence[];
  /** Audit records, oldest first (the page groups them per instance and shows the newest first). */
  records: StoredAuditRecord[];
  /** Set when the page shows one instance's trail only. */
  instance?: string;
  /** How many records were read at most (said on the page when reached). */
  limit: number;
}

const esc = (s: unknown): string =>
  String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const noInstance = '(no instance)';

/** A record that reports an action which changed something: the remediations an operator looks for. */
function isRemediation(r: StoredAuditRecord): boolean {
  return r.type === 'outcome' && (r as { result?: string }).result === 'done';
}

function recordRow(r: StoredAuditRecord): string {
  const result = (r as { result?: string }).result;
  const cls = [`type-${r.type}`, isRemediation(r) ? 'remediation' : '', result === 'failed' || r.type === 'alert' ? 'bad' : ''].filter(Boolean).join(' ');
  return `<tr class="${cls}"><td class="at">${esc(r.at)}</td><td>${esc(r.type)}</td><td>${esc(r.rule ?? '')}</td><td>${esc(result ?? '')}</td><td>${esc(r.summary)}</td></tr>`;
}

function silencesSection(silences: Silence[]): string {
  if (!silences.length) return '<section id="silences"><h2>Silences</h2><p class="empty">No active silence.</p></section>';
  const scope = (s: Silence) =>
    Object.entries(s.scope)
      .filter(([, v]) => v)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ') || 'everything';
  const rows = silences.map((s) => `<tr><td><code>${esc(s.id)}</code></td><td>${esc(scope(s))}</td><td>${esc(s.reason)}</td><td>${esc(s.createdBy)}</td><td>${esc(s.until)}</td></tr>`);
  return `<section id="silences"><h2>Silences (${silences.length})</h2><table><thead><tr><th>id</th><th>scope</th><th>reason</th><th>by</th><th>until</th></tr></thead><tbody>${rows.join('')}</tbody></table></section>`;
}

function trailSection(v: DashboardView): string {
  const byInstance = new Map<string, StoredAuditRecord[]>();
  for (const r of v.records) {
    const key = r.instance ?? noInstance;
    if (!byInstance.has(key)) byInstance.set(key, []);
    byInstance.get(key)!.push(r);
  }
  // Instances with the most recent activity first; "no instance" records last.
  const names = [...byInstance.keys()].sort((a, b) => (a === noInstance ? 1 : b === noInstance ? -1 : byInstance.get(b)!.at(-1)!.id.localeCompare(byInstance.get(a)!.at(-1)!.id, 'en', { numeric: true })));
  const sections = names.map((name) => {
    const records = byInstance.get(name)!;
    const remediations = records.filter(isRemediation).length;
    const link = name === noInstance || v.instance ? esc(name) : `<a href="?instance=${encodeURIComponent(name)}">${esc(name)}</a>`;
    const rows = [...records].reverse().map(recordRow).join('');
    return `<section class="instance" data-instance="${esc(name)}"><h3>${link} <small>${records.length} record(s), ${remediations} remediation(s)</small></h3><table><thead><tr><th>at</th><th>type</th><th>rule</th><th>result</th><th>summary</th></tr></thead><tbody>${rows}</tbody></table></section>`;
  });
  const title = v.instance ? `Audit trail of ${esc(v.instance)} <small><a href="?">all instances</a></small>` : 'Audit trail per instance';
  const limited = v.records.length >= v.limit ? `<p class="note">The newest ${v.limit} records; older ones: <code>reflex audit</code>.</p>` : '';
  return `<section id="audit"><h2>${title}</h2>${limited}${sections.join('') || '<p class="empty">No audit record yet.</p>'}</section>`;
}

const style = `
body{font:14px/1.4 system-ui,sans-serif;margin:1.5rem;color:#1d2330;background:#fafbfc}
h1{font-size:1.4rem;margin:0 0 .2rem} h2{font-size:1.15rem;margin:1.6rem 0 .5rem} h3{font-size:1rem;margin:1rem 0 .3rem}
small{color:#667;font-weight:normal} nav a{margin-right:1rem}
table{border-collapse:collapse;width:100%;background:#fff} th,td{border:1px solid #dde;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#eef1f5} td.at{white-space:nowrap;font-family:monospace;font-size:12px}
tr.remediation{background:#e3f6e5} tr.bad{background:#fde8e8} .empty,.note{color:#667}
`;

/** The dashboard page: links to the queues, the current silences, and the audit trail per instance. */
export function renderDashboard(v: DashboardView): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Reflex dashboard</title><style>${style}</style></head>
<body>
<header><h1>Reflex</h1><p>Target <code>${esc(v.target)}</code></p>
<nav><a href="${esc(v.queuesPath)}">Queues (events, actions)</a><a href="#silences">Silences</a><a href="#audit">Audit trail</a></nav></header>
${silencesSection(v.silences)}
${trailSection(v)}
</body></html>`;
}
