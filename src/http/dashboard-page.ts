import type { StoredAuditRecord } from '../audit/audit-log.js';
import type { AlertsView } from '../notify/alert-board.js';
import { scopeText, type Silence } from '../silences/silences.js';

/** What the dashboard page shows. */
export interface DashboardView {
  /** The target(s) this deployment watches. */
  target: string;
  /** Where the bull-board queues UI lives. */
  queuesPath: string;
  silences: Silence[];
  /** Firing alerts and pending notification groups; undefined when notifications are not configured. */
  alerts?: AlertsView;
  /** Where the silence form posts. */
  silencesPath: string;
  /** Whether the dashboard takes changes (a write token is configured): the silence form is shown. */
  writable: boolean;
  /** Audit records, oldest first (the page groups them per instance and shows the newest first). */
  records: StoredAuditRecord[];
  /** Set when the page shows one instance's trail only. */
  instance?: string;
  /** The operator's console, linked back to from this page (when the console is served). */
  consolePath?: string;
  /** How many records were read at most (said on the page when reached). */
  limit: number;
}

const esc = (s: unknown): string =>
  String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const noInstance = '(no instance)';

/** How far `t` is from `now` in words, as the console says it: `in 364 days`, `3 min ago`, `just now`. */
function relative(t: number, now: number): string {
  const ms = t - now;
  const a = Math.abs(ms);
  const say = (n: number, unit: string) => (ms >= 0 ? `in ${n} ${unit}` : `${n} ${unit} ago`);
  if (a < 5_000) return 'just now';
  if (a < 60_000) return say(Math.round(a / 1_000), 's');
  if (a < 3_600_000) return say(Math.round(a / 60_000), 'min');
  if (a < 48 * 3_600_000) return say(Math.round(a / 3_600_000), 'h');
  const days = Math.round(a / 86_400_000);
  return say(days, days === 1 ? 'day' : 'days');
}

/** A time as the page shows it: `2026-11-25 19:43:58 UTC (3 min ago)`, the age as of the page's rendering. */
function when(t: string | undefined, now = Date.now()): string {
  const ms = t ? Date.parse(t) : NaN;
  if (Number.isNaN(ms)) return esc(t ?? '');
  const iso = new Date(ms).toISOString();
  return `<time datetime="${iso}">${iso.replace('T', ' ').slice(0, 19)} UTC</time> <small class="rel">(${relative(ms, now)})</small>`;
}

/** A record that reports an action which changed something: the remediations an operator looks for. */
function isRemediation(r: StoredAuditRecord): boolean {
  return r.type === 'outcome' && (r as { result?: string }).result === 'done';
}

function recordRow(r: StoredAuditRecord): string {
  const result = (r as { result?: string }).result;
  const cls = [`type-${r.type}`, isRemediation(r) ? 'remediation' : '', result === 'failed' || r.type === 'alert' ? 'bad' : '']
    .filter(Boolean)
    .join(' ');
  return `<tr class="${cls}"><td class="at">${when(r.at)}</td><td class="type">${esc(r.type)}</td><td class="rule">${esc(r.rule ?? '')}</td><td class="result">${esc(result ?? '')}</td><td class="summary">${esc(r.summary)}</td></tr>`;
}

function silencesSection(v: DashboardView): string {
  const { silences } = v;
  const form = v.writable
    ? silenceForm(v.silencesPath)
    : '<p class="note">Read-only dashboard: add silences with <code>reflex silence add</code> (or configure a write token).</p>';
  if (!silences.length) return `<section id="silences"><h2>Silences</h2><p class="empty">No active silence.</p>${form}</section>`;
  const rows = silences.map((s) => {
    const scope = scopeText(s.scope);
    const end = v.writable
      ? `<td><button type="button" data-end="${esc(s.id)}" data-scope="${esc(scope)}" aria-label="End silence of ${esc(scope)}">End</button></td>`
      : '';
    return `<tr><td><code>${esc(s.id)}</code></td><td>${esc(scope)}</td><td>${esc(s.mutes.join(', '))}</td><td>${esc(s.reason)}</td><td>${esc(s.createdBy)}</td><td class="at">${when(s.until)}</td>${end}</tr>`;
  });
  return `<section id="silences"><h2>Silences (${silences.length})</h2><table class="cards"><thead><tr><th>id</th><th>scope</th><th>mutes</th><th>reason</th><th>by</th><th>until</th>${v.writable ? '<th></th>' : ''}</tr></thead><tbody>${rows.join('')}</tbody></table>${form}</section>`;
}

/**
 * The silence form. A write needs a token as Authorization: Bearer, an Origin and a JSON body,
 * which a plain HTML form cannot send: a small script posts it with fetch, after a confirmation
 * that says back what the silence covers (everything, in words, when no scope is given), for how
 * long and why. Who added it is who the token says (the server's), never a name typed here. The
 * token lives in the page's field only (never a cookie, never storage).
 */
function silenceForm(path: string): string {
  return `<form id="silence-form" autocomplete="off"><h3>Add a silence</h3>
<label>instance <input name="instance"></label> <label>project <input name="project"></label> <label>member <input name="location"></label>
<label>duration <input name="duration" required placeholder="2h"></label> <label>reason <input name="reason" required></label>
<label><input type="checkbox" name="actions" checked> mutes actions</label> <label><input type="checkbox" name="notifications" checked> mutes notifications</label> <label><input type="checkbox" name="all"> everything</label>
<label>your token <input type="password" id="write-token" name="token" required></label> <button type="submit">Add silence…</button> <output id="silence-result" role="status"></output></form>
<p class="note">A silence of everything, of more than one instance or longer than a day needs a reason of at least 3 words. Every change asks first.</p>
<dialog id="confirm" aria-labelledby="confirm-title" aria-describedby="confirm-text"><form method="dialog">
<h2 id="confirm-title"></h2><p id="confirm-text"></p><p id="confirm-reason"></p>
<div class="dialog-buttons"><button value="cancel" id="confirm-cancel" autofocus>Cancel</button> <button value="ok" id="confirm-ok" class="danger"></button></div>
</form></dialog>
<script>
${armedConfirm}
const silencePath = ${JSON.stringify(path)};
const out = document.getElementById('silence-result');
async function send(method, url, body) {
  const token = document.getElementById('write-token').value;
  if (!token) { out.textContent = 'Type your token first.'; document.getElementById('write-token').focus(); return; }
  let res, text;
  try {
    res = await fetch(url, { method, headers: { 'Authorization': 'Bearer ' + token, 'Content-Type': 'application/json' }, body: body && JSON.stringify(body), credentials: 'same-origin', signal: AbortSignal.timeout(15000) });
    text = await res.text();
  } catch (e) { out.textContent = '✖ not confirmed: no answer (' + e.message + '); reload to see whether it was done'; return; }
  let answer; try { answer = JSON.parse(text); } catch { answer = { error: text }; }
  out.textContent = res.ok ? '✔ ' + (answer && answer.id ? 'silence ' + answer.id + ' until ' + answer.until : 'done') : '✖ refused (' + res.status + '): ' + ((answer && answer.error) || text);
  if (res.ok) setTimeout(() => location.reload(), 800);
}
document.getElementById('silence-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const f = ev.target.elements;
  const scope = {};
  for (const k of ['instance', 'project', 'location']) if (f[k].value.trim()) scope[k] = f[k].value.trim();
  const all = f.all.checked && !Object.keys(scope).length;
  const mutes = ['actions', 'notifications'].filter((m) => f[m].checked);
  const scopeText = Object.entries(scope).map(([k, v]) => k + '=' + v).join(' ');
  if (!scopeText && !all) { out.textContent = '✖ give an instance, project or member, or tick everything'; return; }
  const what = all ? 'EVERYTHING (every instance of every target)' : scopeText;
  const ok = await armedConfirm(
    'Silence ' + (all ? 'everything' : scopeText) + ' for ' + f.duration.value.trim() + '?',
    'While it lasts, ' + (mutes.join(' and ') || 'nothing') + ' ' + (mutes.length > 1 ? 'are' : 'is') + ' muted for ' + what + '.' + (mutes.includes('actions') ? ' Reflex will not heal what crashes there.' : ''),
    'Reason: ' + f.reason.value,
    all ? 'Silence everything' : 'Silence ' + scopeText);
  if (ok) await send('POST', silencePath, { scope, ...(all ? { all: true } : {}), duration: f.duration.value.trim(), reason: f.reason.value, mutes });
});
document.addEventListener('click', async (ev) => {
  const b = ev.target.closest && ev.target.closest('button[data-end]');
  if (!b) return;
  const ok = await armedConfirm('End the silence of ' + b.dataset.scope + '?', "Reflex's rules act again on " + b.dataset.scope + ', and its alerts are notified again, from now on.', '', 'End silence of ' + b.dataset.scope);
  if (ok) await send('DELETE', silencePath + '/' + encodeURIComponent(b.dataset.end));
});
</script>`;
}

/**
 * The confirmation every write of the page goes through, as in the console: Cancel has the focus
 * (Enter cancels), and the confirming button takes no click for its first 400 ms, so the second
 * click of a double-click (or a click meant for what was under the pointer) never confirms.
 */
const armedConfirm = `function armedConfirm(title, text, reason, okText) {
  const dialog = document.getElementById('confirm');
  const okButton = document.getElementById('confirm-ok');
  document.getElementById('confirm-title').textContent = title;
  document.getElementById('confirm-text').textContent = text;
  document.getElementById('confirm-reason').textContent = reason;
  okButton.textContent = okText;
  okButton.disabled = true;
  dialog.returnValue = '';
  dialog.showModal();
  document.getElementById('confirm-cancel').focus();
  clearTimeout(armedConfirm.timer);
  armedConfirm.timer = setTimeout(() => { okButton.disabled = false; }, 400);
  return new Promise((resolve) => dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true }));
}`;

function alertsSection(view: AlertsView | undefined): string {
  if (!view)
    return '<section id="alerts"><h2>Alerts</h2><p class="empty">Notifications are not configured (or this replica runs no worker).</p></section>';
  const firing = view.firing.map(
    (a) =>
      `<tr class="bad"><td class="at">${when(a.startsAt)}</td><td>${esc(a.severity)}</td><td>${esc(a.kind)}</td><td>${esc(a.instance)}</td><td>${esc(a.project)}</td><td>${esc(a.summary)}</td></tr>`,
  );
  const firingTable = firing.length
    ? `<table><thead><tr><th>since</th><th>severity</th><th>kind</th><th>instance</th><th>project</th><th>summary</th></tr></thead><tbody>${firing.join('')}</tbody></table>`
    : '<p class="empty">No firing alert.</p>';
  const groups = view.groups.map((g) => {
    const next = g.next
      ? `[${g.next.status.toUpperCase()}${g.next.repeat ? ', repeat' : ''}] ${g.next.alerts.map((a) => `${a.instance} (${a.status})`).join(', ')}`
      : 'nothing';
    const alerts = g.alerts.map((a) => esc(`${a.alert.instance} ${a.alert.status}${a.muted ? `, muted: ${a.muted}` : ''}`)).join('<br>');
    return `<tr><td>${esc(g.receiver)}</td><td>${esc(
      Object.entries(g.groupLabels)
        .map(([k, x]) => `${k}=${x}`)
        .join(' '),
    )}</td><td class="at">${when(g.nextFlushAt)}</td><td>${esc(next)}</td><td>${alerts}</td></tr>`;
  });
  const groupTable = groups.length
    ? `<table><thead><tr><th>receiver</th><th>group</th><th>next flush</th><th>next message</th><th>alerts in the group</th></tr></thead><tbody>${groups.join('')}</tbody></table>`
    : '<p class="empty">No pending group.</p>';
  return `<section id="alerts"><h2>Firing alerts (${view.firing.length})</h2>${firingTable}<h2 id="groups">Pending notification groups (${view.groups.length})</h2>${groupTable}</section>`;
}

function trailSection(v: DashboardView): string {
  const byInstance = new Map<string, StoredAuditRecord[]>();
  for (const r of v.records) {
    const key = r.instance ?? noInstance;
    if (!byInstance.has(key)) byInstance.set(key, []);
    byInstance.get(key)!.push(r);
  }
  // Instances with the most recent activity first; "no instance" records last.
  const names = [...byInstance.keys()].sort((a, b) =>
    a === noInstance
      ? 1
      : b === noInstance
        ? -1
        : byInstance.get(b)!.at(-1)!.id.localeCompare(byInstance.get(a)!.at(-1)!.id, 'en', { numeric: true }),
  );
  const sections = names.map((name) => {
    const records = byInstance.get(name)!;
    const remediations = records.filter(isRemediation).length;
    const link = name === noInstance || v.instance ? esc(name) : `<a href="?instance=${encodeURIComponent(name)}">${esc(name)}</a>`;
    const rows = [...records].reverse().map(recordRow).join('');
    return `<section class="instance" data-instance="${esc(name)}"><h3>${link} <small>${records.length} record(s), ${remediations} remediation(s)</small></h3><table class="records"><thead><tr><th>at</th><th>type</th><th>rule</th><th>result</th><th>summary</th></tr></thead><tbody>${rows}</tbody></table></section>`;
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
section{overflow-x:auto} td{overflow-wrap:anywhere} .rel{white-space:nowrap}
dialog{border:1px solid #c5cbd5;border-radius:6px;max-width:min(36rem,92vw);padding:1rem} dialog::backdrop{background:rgb(0 0 0 / .35)}
dialog h2{margin-top:0} .dialog-buttons{display:flex;gap:.6rem;justify-content:flex-end;margin-top:.8rem} #confirm-reason{font-weight:600;overflow-wrap:anywhere}
button.danger{background:#b3261e;color:#fff;border:1px solid #b3261e} button:disabled{opacity:.5}
@media(max-width:760px){body{margin:.6rem} nav a{display:inline-block;margin:.2rem 1rem .2rem 0} th,td{padding:.2rem .3rem}
 table.records thead,table.cards thead{position:absolute;left:-9999px} table.records tr,table.cards tr{display:block;border-bottom:1px solid #dde;padding:.2rem 0}
 table.records td{display:inline-block;border:0;padding:.05rem .3rem .05rem 0} table.records td.at{display:block;white-space:normal} table.records td.summary{display:block;overflow-wrap:break-word}
 table.cards td{display:block;border:0} #silence-form label{display:block;margin:.2rem 0} #silence-form input:not([type=checkbox]){width:100%}}
`;

/** The dashboard page: links to the queues, firing alerts and pending groups, the silences (and a form to add one), and the audit trail per instance. */
export function renderDashboard(v: DashboardView): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>Reflex dashboard</title><style>${style}</style></head>
<body>
<header><h1>Reflex</h1><p>Target <code>${esc(v.target)}</code></p>
<nav>${v.consolePath ? `<a href="${esc(v.consolePath)}">← Console</a>` : ''}<a href="${esc(v.queuesPath)}">Queues (events, actions)</a><a href="#alerts">Alerts</a><a href="#silences">Silences</a><a href="#audit">Audit trail</a></nav></header>
${alertsSection(v.alerts)}
${silencesSection(v)}
${trailSection(v)}
</body></html>`;
}
