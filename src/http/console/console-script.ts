/**
 * The console's browser script (plain ES2020, no build step, no dependency). It reads the console
 * API, renders one page of the fleet at a time (never the whole fleet into the DOM), draws the
 * plots as small hand-written SVG, and re-reads when the server-sent change stream says so. Writes
 * carry the write token typed into the page as Authorization: Bearer, same-origin only.
 */
export const consoleScript = String.raw`(() => {
'use strict';
const C = window.REFLEX_CONSOLE, api = C.api;
const $ = (s) => document.querySelector(s);
const esc = (s) => String(s == null ? '' : s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
const utc = (t) => t ? new Date(t).toISOString().replace('T', ' ').slice(5, 19) : '';
const icons = { Running: '▶', Stopped: '■', Error: '✖', Frozen: '❄', Starting: '◔', Stopping: '◔' };
const kinds = { crash: '⚠ crash', error: '✖ Error', 'failed-operation': '✖ failed operation', 'unknown-stop': '? unknown stop', 'failed-start': '✖ failed start' };
const state = { q: {}, flag: '', offset: 0, limit: 50, since: '24h', instance: '', page: null, targets: 1 };

async function get(path) {
  const r = await fetch(api + path, { credentials: 'same-origin' });
  const body = await r.json().catch(() => ({ error: r.statusText }));
  if (!r.ok) throw new Error(body.error || r.statusText);
  return body;
}

/** Runs fn now, or once more right after the run in flight (never two at once). */
const loads = {};
function schedule(name, fn) {
  const l = loads[name] || (loads[name] = { running: false, again: false });
  if (l.running) { l.again = true; return; }
  l.running = true;
  Promise.resolve().then(fn).catch((e) => console.warn(name, e)).finally(() => { l.running = false; if (l.again) { l.again = false; schedule(name, fn); } });
}

/** Like schedule, but at most once per gapMs (the audit stream can grow many times a second in a storm). */
const lastRun = {}, timers = {};
function throttle(name, fn, gapMs) {
  const wait = (lastRun[name] || 0) + gapMs - Date.now();
  if (wait > 0) { if (!timers[name]) timers[name] = setTimeout(() => { timers[name] = 0; throttle(name, fn, gapMs); }, wait); return; }
  lastRun[name] = Date.now();
  schedule(name, fn);
}

const countLabels = [['total', 'instances'], ['down', 'down'], ['error', 'in Error'], ['quarantined', 'quarantined'], ['backoff', 'in back-off'], ['silenced', 'silenced'], ['acting', 'being acted on']];
function renderCounts(d) {
  $('#counts').innerHTML = countLabels.map(([k, label]) => '<li><button type="button" data-flag="' + (k === 'total' ? '' : k) + '" aria-pressed="' + (state.flag === (k === 'total' ? '' : k)) + '"><b>' + (d.counts[k] || 0) + '</b>' + label + '</button></li>').join('');
}
function fillSelect(name, values) {
  const sel = document.querySelector('#filters [name=' + name + ']');
  const cur = sel.value || state.q[name] || '';
  sel.innerHTML = '<option value="">all</option>' + values.map((v) => '<option' + (v === cur ? ' selected' : '') + '>' + esc(v) + '</option>').join('');
}
function flagsOf(r) {
  const f = [];
  if (r.quarantined) f.push('<span class="flag quarantined">⊘ quarantined' + (r.quarantined.until ? ' until ' + utc(r.quarantined.until) : '') + '</span>');
  if (r.backoffUntil) f.push('<span class="flag backoff">↻ back-off until ' + utc(r.backoffUntil) + '</span>');
  if (r.acting) f.push('<span class="flag acting">⚙ being acted on</span>');
  if (r.silenced) f.push('<span class="flag silenced" title="' + esc(r.silenced.reason) + '">◌ silenced until ' + utc(r.silenced.until) + '</span>');
  return f.join('') || '<span class="muted">—</span>';
}
function actionsOf(r) {
  if (!C.writable) return '';
  const k = esc(r.key), out = [];
  if (r.statusCode !== 103) out.push('<button type="button" class="act" data-act="heal" data-key="' + k + '">Heal</button>');
  if (r.quarantined) out.push('<button type="button" class="act" data-act="release" data-key="' + k + '">Release</button>');
  out.push('<button type="button" class="act" data-act="silence" data-key="' + k + '">Silence</button>');
  return out.join(' ');
}
function renderRows(d) {
  const multi = d.targets.length > 1;
  const head = '<tr><th>instance</th><th>project</th>' + (multi ? '<th>target</th>' : '') + '<th>member</th><th>status</th><th>since (UTC)</th><th>opt-in</th><th>state</th><th>restarts</th>' + (C.writable ? '<th>actions</th>' : '') + '</tr>';
  const rows = d.rows.map((r) => '<tr data-key="' + esc(r.key) + '" data-status="' + esc(r.status) + '">' +
    '<td data-label="instance"><a href="#incidents" data-instance="' + esc(r.name) + '">' + esc(r.name) + '</a></td>' +
    '<td data-label="project">' + esc(r.project) + '</td>' + (multi ? '<td data-label="target" class="mono">' + esc(r.target) + '</td>' : '') +
    '<td data-label="member">' + esc(r.location == null ? '?' : r.location) + '</td>' +
    '<td data-label="status"><span class="st st-' + esc(r.status) + '">' + (icons[r.status] || '•') + ' ' + esc(r.status) + '</span>' + (r.statusFrom === 'list' ? ' <small>(daemon list; not seen by Reflex yet)</small>' : r.intent && r.statusCode !== 103 ? ' <small>(' + esc(r.intent) + ')</small>' : '') + '</td>' +
    '<td data-label="since" class="at">' + utc(r.since) + '</td>' +
    '<td data-label="opt-in">' + (r.optIn == null ? '?' : r.optIn ? '✔ yes' : '✘ no') + '</td>' +
    '<td data-label="state">' + flagsOf(r) + '</td><td data-label="restarts">' + r.restarts + '</td>' +
    (C.writable ? '<td data-label="actions">' + actionsOf(r) + '</td>' : '') + '</tr>').join('');
  $('#fleet-table').innerHTML = d.rows.length ? '<table class="cards" aria-label="Fleet"><thead>' + head + '</thead><tbody>' + rows + '</tbody></table>' : '<p class="muted">No instance matches.</p>';
  $('#page-info').textContent = d.matched ? 'rows ' + (d.offset + 1) + '–' + (d.offset + d.rows.length) + ' of ' + d.matched + ' matching (' + d.total + ' in the fleet)' : '0 matching (' + d.total + ' in the fleet)';
  $('#prev').disabled = d.offset === 0;
  $('#next').disabled = d.offset + d.rows.length >= d.matched;
}
/**
 * The view (fleet filters, count pressed, page, incident range) lives in the page's address, so a
 * reload, a bookmark or a link sent to a colleague opens the same view. Other parameters of the
 * address (the read token) are kept as they are.
 */
const fleetKeys = ['target', 'project', 'member', 'status', 'filter'];
function saveView() {
  const p = new URLSearchParams(location.search);
  for (const k of fleetKeys.concat(['flag', 'offset', 'since', 'instance'])) p.delete(k);
  for (const k of fleetKeys) if (state.q[k]) p.set(k, state.q[k]);
  if (state.flag) p.set('flag', state.flag);
  if (state.offset) p.set('offset', String(state.offset));
  if (state.since !== '24h') p.set('since', state.since);
  if (state.instance) p.set('instance', state.instance);
  const q = p.toString();
  history.replaceState(null, '', location.pathname + (q ? '?' + q : '') + location.hash);
}
function restoreView() {
  const p = new URLSearchParams(location.search), f = $('#filters').elements, r = $('#range').elements;
  for (const k of fleetKeys) {
    const v = p.get(k);
    if (!v) continue;
    state.q[k] = v;
    if (f[k].tagName === 'SELECT' && ![...f[k].options].some((o) => o.value === v)) f[k].insertAdjacentHTML('beforeend', '<option>' + esc(v) + '</option>');
    f[k].value = v;
  }
  state.flag = p.get('flag') || '';
  state.offset = Math.max(0, Number(p.get('offset')) || 0);
  const since = p.get('since');
  if (since && [...r.since.options].some((o) => o.value === since)) { state.since = since; r.since.value = since; }
  state.instance = p.get('instance') || '';
  r.instance.value = state.instance;
}
async function loadFleet() {
  saveView();
  const p = new URLSearchParams(Object.assign({}, state.q, state.flag ? { flag: state.flag } : {}, { offset: state.offset, limit: state.limit }));
  let d;
  try { d = await get('/fleet?' + p); } catch (e) { $('#fleet-table').textContent = 'Could not read the fleet: ' + e.message; return; }
  state.page = d;
  renderCounts(d);
  fillSelect('target', d.targets); fillSelect('project', d.projects); fillSelect('member', d.members);
  renderRows(d);
  if (!window.__firstRender) { window.__firstRender = performance.now(); document.body.dataset.rendered = 'fleet'; }
}

function renderTrail(records) {
  return '<table class="cards"><thead><tr><th>at (UTC)</th><th>type</th><th>rule</th><th>result</th><th>summary</th></tr></thead><tbody>' +
    records.map((r) => '<tr data-type="' + esc(r.type) + '"><td data-label="at" class="at">' + utc(r.at) + '</td><td data-label="type">' + esc(r.type) + '</td><td data-label="rule">' + esc(r.rule) + '</td><td data-label="result">' + esc(r.result) + '</td><td data-label="summary">' + esc(r.summary) + '</td></tr>').join('') + '</tbody></table>';
}
function renderIncidents(d) {
  $('#incident-list').innerHTML = d.incidents.length ? d.incidents.map((i) => '<li class="incident" data-correlation="' + esc(i.correlationId) + '" data-instance="' + esc(i.instance) + '">' +
    '<span class="kind">' + esc(kinds[i.kind] || i.kind) + '</span> <span class="at">' + utc(i.at) + '</span> ' + (i.healMs != null ? '<span class="flag">✔ healed</span>' : i.outcome ? '<span class="flag bad">✘ ' + esc(i.outcome.result) + '</span>' : '<span class="flag backoff">… open</span>') +
    '<p class="story">' + esc(i.story) + '</p><button type="button" aria-expanded="false" data-trail="' + esc(i.correlationId) + '" data-since="' + esc(new Date(Date.parse(i.at) - 60000).toISOString()) + '">Audit trail</button><div class="trail" hidden></div></li>').join('') +
    (d.total > d.incidents.length ? '<li class="muted">' + (d.total - d.incidents.length) + ' older incident(s) not shown</li>' : '') : '<li class="muted">No incident in this range.</li>';
  if (d.truncated) $('#incident-list').insertAdjacentHTML('afterbegin', '<li class="muted">Only the newest 50 000 audit records of the range were read: older incidents and plot points are missing (reflex audit reads them all).</li>');
}
function renderAlerts(d) {
  const a = d.alerts;
  let html = !a ? '<p class="muted">Notifications are not configured (or this replica runs no worker).</p>' :
    '<h3>Firing alerts (' + a.firing.length + ')</h3>' + (a.firing.length ? '<ul>' + a.firing.map((x) => '<li>⚠ <b>' + esc(x.severity) + '</b> ' + esc(x.instance) + ': ' + esc(x.summary) + ' <small>since ' + utc(x.startsAt) + '</small></li>').join('') + '</ul>' : '<p class="muted">None.</p>') +
    '<h3>Pending notification groups (' + a.groups.length + ')</h3>' + (a.groups.length ? '<ul>' + a.groups.map((g) => '<li>' + esc(g.receiver) + ': ' + g.alerts.length + ' alert(s), next flush ' + utc(g.nextFlushAt) + '</li>').join('') + '</ul>' : '<p class="muted">None.</p>');
  html += '<h3>Silences (' + d.silences.length + ')</h3>' + (d.silences.length ? '<ul id="silence-list">' + d.silences.map((s) => '<li data-silence="' + esc(s.id) + '">◌ ' + esc(Object.entries(s.scope).map((e) => e[0] + '=' + e[1]).join(' ') || 'everything') + ' — ' + esc(s.reason) + ' <small>by ' + esc(s.createdBy) + (s.origin ? ' (' + esc(s.origin) + ')' : '') + ', until ' + utc(s.until) + '</small>' + (C.writable ? ' <button type="button" class="act" data-end-silence="' + esc(s.id) + '">End</button>' : '') + '</li>').join('') + '</ul>' : '<p class="muted">No active silence.</p>');
  $('#alerts-body').innerHTML = html;
}

function bars(title, items, color) {
  const h = 18, w = 420, labelW = 120, max = Math.max(1, ...items.map((x) => x.value));
  const rows = items.map((x, k) => '<g><title>' + esc(x.label + ': ' + x.value) + '</title><text x="0" y="' + (k * h + 13) + '">' + esc(x.label.length > 18 ? x.label.slice(0, 17) + '…' : x.label) + '</text><rect class="' + color + '" x="' + labelW + '" y="' + (k * h + 3) + '" height="' + (h - 6) + '" width="' + Math.max(x.value ? 2 : 0, (x.value / max) * (w - labelW - 40)) + '"></rect><text x="' + (labelW + 4 + (x.value / max) * (w - labelW - 40)) + '" y="' + (k * h + 13) + '">' + x.value + '</text></g>').join('');
  return '<figure><figcaption><b>' + esc(title) + '</b></figcaption><svg role="img" aria-label="' + esc(title + ': ' + items.map((x) => x.label + ' ' + x.value).join(', ')) + '" viewBox="0 0 ' + w + ' ' + Math.max(h, items.length * h) + '">' + rows + '</svg></figure>';
}
function timeline(p) {
  const w = 600, h = 150, base = 120, n = p.timeline.length, bw = (w - 40) / n, max = Math.max(1, ...p.timeline.map((b) => Math.max(b.incidents, b.remediations)));
  const y = (v) => (v / max) * (base - 10);
  let g = '';
  p.timeline.forEach((b, k) => {
    const x = 30 + k * bw;
    g += '<g><title>' + esc(utc(b.start) + ': ' + b.incidents + ' incident(s), ' + b.remediations + ' remediation(s)') + '</title>' +
      (b.incidents ? '<rect class="i" x="' + x.toFixed(1) + '" y="' + (base - y(b.incidents)).toFixed(1) + '" width="' + (bw / 2 - 0.5).toFixed(1) + '" height="' + y(b.incidents).toFixed(1) + '"></rect>' : '') +
      (b.remediations ? '<rect class="r" x="' + (x + bw / 2).toFixed(1) + '" y="' + (base - y(b.remediations)).toFixed(1) + '" width="' + (bw / 2 - 0.5).toFixed(1) + '" height="' + y(b.remediations).toFixed(1) + '"></rect>' : '') + '</g>';
  });
  const ti = p.timeline.reduce((a, b) => a + b.incidents, 0), tr = p.timeline.reduce((a, b) => a + b.remediations, 0);
  const axis = '<line x1="30" y1="' + base + '" x2="' + (w - 10) + '" y2="' + base + '"></line><text x="0" y="14">' + max + '</text><text x="30" y="' + (base + 16) + '">' + utc(p.from) + '</text><text x="' + (w - 10) + '" y="' + (base + 16) + '" text-anchor="end">' + utc(p.to) + '</text>' +
    '<rect class="i" x="30" y="' + (base + 24) + '" width="10" height="8"></rect><text x="44" y="' + (base + 32) + '">incidents (■ red)</text><rect class="r" x="170" y="' + (base + 24) + '" width="10" height="8"></rect><text x="184" y="' + (base + 32) + '">remediations (■ green)</text>';
  return '<figure><figcaption><b>Timeline</b> <small>' + ti + ' incident(s), ' + tr + ' remediation(s); one bar pair per ' + Math.round(p.bucketMs / 60000) + ' min</small></figcaption><svg role="img" aria-label="Timeline: ' + ti + ' incidents and ' + tr + ' remediations between ' + esc(utc(p.from)) + ' and ' + esc(utc(p.to)) + '" viewBox="0 0 ' + w + ' ' + (h + 20) + '">' + g + axis + '</svg></figure>';
}
function renderPlots(d) {
  const p = d.plots;
  $('#plot-area').innerHTML = timeline(p) +
    bars('Time to heal' + (p.unhealed ? ' (' + p.unhealed + ' not healed)' : ''), p.heal.map((b) => ({ label: b.label, value: b.count })), 'h') +
    bars('Restarts per instance in the budget window', d.restarts.length ? d.restarts.map((r) => ({ label: r.name, value: r.restarts })) : [{ label: 'none', value: 0 }], 'i');
}
async function loadIncidents() {
  saveView();
  const p = new URLSearchParams({ since: state.since });
  if (state.instance) p.set('instance', state.instance);
  const d = await get('/incidents?' + p);
  renderIncidents(d); renderAlerts(d); renderPlots(d);
  $('#plots-h').textContent = 'Plots' + (state.instance ? ' of ' + state.instance : ' of the fleet');
}

const mark = (ok) => ok ? '✔' : '✖';
async function loadHealth() {
  let h;
  try { h = await get('/health'); } catch (e) { $('#health-list').innerHTML = '<li class="bad">✖ console unreachable: ' + esc(e.message) + '</li>'; return; }
  const items = Object.entries(h.checks).map(([name, c]) => '<li class="' + (c.ok ? 'ok' : 'bad') + '">' + mark(c.ok) + ' ' + esc(name) + ': ' + esc(c.detail) + '</li>');
  for (const s of h.streams) items.push('<li class="' + (s.connected ? 'ok' : 'bad') + '">' + mark(s.connected) + ' stream ' + esc(s.target) + ': ' + (s.connected ? 'connected' : 'not connected') + ', ' + (s.leaseHolder ? 'lease holder' : 'standby') + (s.buffered ? ', ' + s.buffered + ' frame(s) buffered' : '') + '</li>');
  items.push('<li>event lag: ' + (h.lag.meanMs == null ? 'no event yet' : 'mean ' + h.lag.meanMs + ' ms over ' + h.lag.count + ' event(s)') + '</li>');
  for (const [q, states] of Object.entries(h.queues)) items.push('<li>queue ' + esc(q) + ': ' + Object.entries(states).map((e) => e[1] + ' ' + e[0]).join(', ') + '</li>');
  items.push('<li class="' + (h.deadLetters ? 'bad' : 'ok') + '">' + (h.deadLetters ? '✖ ' : '✔ ') + h.deadLetters + ' dead letter(s)</li>');
  $('#health-list').innerHTML = items.join('');
}
async function loadDlq() {
  const d = await get('/dlq');
  $('#dlq-body').innerHTML = d.jobs.length ? '<table class="cards"><thead><tr><th>job</th><th>instance</th><th>failed (UTC)</th><th>reason</th>' + (C.writable ? '<th></th>' : '') + '</tr></thead><tbody>' + d.jobs.map((j) => '<tr><td data-label="job" class="mono">' + esc(j.id) + '</td><td data-label="instance">' + esc(j.instance) + ' <small>' + esc(j.rule + '/' + j.action) + '</small></td><td data-label="failed" class="at">' + utc(j.failedAt) + '</td><td data-label="reason">' + esc(j.reason) + '</td>' + (C.writable ? '<td><button type="button" class="act" data-retry="' + esc(j.id) + '">Retry</button></td>' : '') + '</tr>').join('') + '</tbody></table>' : '<p class="muted">None.</p>';
}

async function post(path, body) {
  const out = $('#action-result'), token = $('#write-token').value;
  if (!token) { out.textContent = 'Type the write token first.'; $('#write-token').focus(); return false; }
  const actor = $('#actor').value.trim();
  const r = await fetch(api + path, { method: 'POST', headers: { Authorization: 'Bearer ' + token, 'Content-Type': 'application/json' }, body: JSON.stringify(Object.assign(body, actor ? (path === '/silences' ? { createdBy: actor } : { actor }) : {})), credentials: 'same-origin' });
  const text = await r.text();
  let a; try { a = JSON.parse(text); } catch (e) { a = { error: text.trim() }; }
  out.textContent = r.ok ? '✔ done: ' + (a.released ? 'released' : a.jobId ? 'heal queued as job ' + a.jobId : a.retried ? 'retried ' + a.retried : a.ended ? 'ended silence ' + a.ended : a.id ? 'silence ' + a.id + ' until ' + utc(a.until) + ' UTC' : JSON.stringify(a)) : '✖ refused (' + r.status + '): ' + (a.error || text);
  schedule('fleet', loadFleet); schedule('incidents', loadIncidents); schedule('dlq', loadDlq); schedule('health', loadHealth);
  return r.ok;
}
const rowOf = (key) => state.page && state.page.rows.find((r) => r.key === key);

document.addEventListener('click', async (ev) => {
  const t = ev.target.closest('button,a');
  if (!t) return;
  if (t.dataset.flag !== undefined && t.closest('#counts')) { state.flag = t.dataset.flag; state.offset = 0; schedule('fleet', loadFleet); return; }
  if (t.dataset.instance !== undefined && t.tagName === 'A') { state.instance = t.dataset.instance; document.querySelector('#range [name=instance]').value = state.instance; schedule('incidents', loadIncidents); return; }
  if (t.dataset.trail) {
    const box = t.nextElementSibling, open = t.getAttribute('aria-expanded') === 'true';
    t.setAttribute('aria-expanded', String(!open));
    if (open) { box.hidden = true; return; }
    box.hidden = false; box.textContent = 'reading…';
    const d = await get('/trail?' + new URLSearchParams({ id: t.dataset.trail, since: t.dataset.since }));
    box.innerHTML = renderTrail(d.records);
    return;
  }
  if (t.dataset.retry) { await post('/dlq/retry', { id: t.dataset.retry }); return; }
  if (t.dataset.endSilence) { await post('/silences/' + encodeURIComponent(t.dataset.endSilence) + '/end', {}); return; }
  const r = t.dataset.act && rowOf(t.dataset.key);
  if (!r) return;
  const ref = { target: r.target, project: r.project, instance: r.name };
  if (t.dataset.act === 'heal') await post('/heal', ref);
  else if (t.dataset.act === 'release') await post('/quarantine/release', ref);
  else if (t.dataset.act === 'silence') {
    const f = $('#silence-form').elements;
    f.instance.value = r.name; f.project.value = r.project; f.location.value = '';
    f.duration.focus();
  }
});
$('#prev').addEventListener('click', () => { state.offset = Math.max(0, state.offset - state.limit); schedule('fleet', loadFleet); });
$('#next').addEventListener('click', () => { state.offset += state.limit; schedule('fleet', loadFleet); });
$('#filters').addEventListener('submit', (ev) => {
  ev.preventDefault();
  state.q = {};
  for (const [k, v] of new FormData(ev.target)) if (v) state.q[k] = v;
  state.offset = 0;
  schedule('fleet', loadFleet);
});
$('#range').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const f = ev.target.elements;
  state.since = f.since.value; state.instance = f.instance.value.trim();
  schedule('incidents', loadIncidents);
});
const form = $('#silence-form');
if (form) form.addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const f = ev.target.elements;
  const scope = {};
  for (const k of ['instance', 'project', 'location']) if (f[k].value.trim()) scope[k] = f[k].value.trim();
  await post('/silences', { scope, duration: f.duration.value, reason: f.reason.value, mutes: ['actions', 'notifications'].filter((m) => f[m].checked) });
});
document.addEventListener('keydown', (ev) => {
  if (ev.key === '/' && !/INPUT|SELECT|TEXTAREA/.test(document.activeElement.tagName)) { ev.preventDefault(); document.querySelector('#filters [name=filter]').focus(); }
});

const live = (text) => { $('#live').textContent = text; };
const source = new EventSource(api + '/events');
source.addEventListener('hello', () => live('● live'));
source.addEventListener('change', (ev) => {
  const c = JSON.parse(ev.data);
  if (c.fleet) schedule('fleet', loadFleet);
  if (c.audit) { throttle('incidents', loadIncidents, 1000); throttle('dlq', loadDlq, 1000); throttle('health', loadHealth, 1000); }
});
source.onerror = () => live('○ reconnecting…');
restoreView();
schedule('fleet', loadFleet);
schedule('incidents', loadIncidents);
schedule('health', loadHealth);
schedule('dlq', loadDlq);
setInterval(() => schedule('health', loadHealth), 5000);
})();`;
