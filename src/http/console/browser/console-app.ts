/**
 * The console's browser script (bundled into one inline script by `npm run build:console`, no
 * dependency). It reads the console API, renders one page of the fleet at a time (never the whole
 * fleet into the DOM), draws the plots as small hand-written SVG, and re-reads when the
 * server-sent change stream says so. Writes carry the write token typed into the page as
 * Authorization: Bearer, same-origin only.
 */
import type { ConsoleSettings, DeadLetters, FleetPage, FleetRow, Health, IncidentsAnswer, TrailRecord, WriteAnswer } from './console-wire.js';
import { esc, utc } from './markup.js';
import { bars, timeline } from './plots.js';
import { alertsView, countsView, deadLettersView, fleetTableView, healthView, incidentsView, optionsView, pageInfoText, trailView } from './views.js';

declare global {
  interface Window {
    REFLEX_CONSOLE: ConsoleSettings;
    /** When the fleet was first drawn (performance.now()), read by the tests. */
    __firstRender?: number;
  }
}

/** The fleet filters' fields, in the address as in the form. */
const fleetKeys = ['target', 'project', 'member', 'status', 'filter'] as const;
type FleetKey = (typeof fleetKeys)[number];

const C = window.REFLEX_CONSOLE;
const api = C.api;
const state = {
  q: {} as Partial<Record<FleetKey, string>>,
  flag: '',
  offset: 0,
  limit: 50,
  since: '24h',
  instance: '',
  page: null as FleetPage | null,
};

/** The element `selector` finds; the page's shell has every one this script asks for. */
function $<E extends Element = HTMLElement>(selector: string): E {
  const el = document.querySelector<E>(selector);
  if (!el) throw new Error(`no ${selector} in the page`);
  return el;
}
/** The form's field `name`; the page's forms have every one this script asks for. */
function field<E extends Element = HTMLInputElement>(form: HTMLFormElement, name: string): E {
  const el = form.elements.namedItem(name);
  if (!el) throw new Error(`no field ${name} in #${form.id}`);
  return el as E;
}
const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

async function get<T>(path: string): Promise<T> {
  const r = await fetch(api + path, { credentials: 'same-origin' });
  const body = await r.json().catch(() => ({ error: r.statusText }));
  if (!r.ok) throw new Error((body as { error?: string }).error || r.statusText);
  return body as T;
}

const loads: Record<string, { running: boolean; again: boolean }> = {};
/** Runs fn now, or once more right after the run in flight (never two at once). */
function schedule(name: string, fn: () => Promise<void>): void {
  const l = (loads[name] ??= { running: false, again: false });
  if (l.running) {
    l.again = true;
    return;
  }
  l.running = true;
  Promise.resolve()
    .then(fn)
    .catch((e) => console.warn(name, e))
    .finally(() => {
      l.running = false;
      if (l.again) {
        l.again = false;
        schedule(name, fn);
      }
    });
}

const lastRun: Record<string, number> = {};
const timers: Record<string, number> = {};
/** Like schedule, but at most once per gapMs (the audit stream can grow many times a second in a storm). */
function throttle(name: string, fn: () => Promise<void>, gapMs: number): void {
  const wait = (lastRun[name] || 0) + gapMs - Date.now();
  if (wait > 0) {
    if (!timers[name]) {
      timers[name] = setTimeout(() => {
        timers[name] = 0;
        throttle(name, fn, gapMs);
      }, wait);
    }
    return;
  }
  lastRun[name] = Date.now();
  schedule(name, fn);
}

function fillSelect(name: FleetKey, values: string[]): void {
  const sel = $<HTMLSelectElement>(`#filters [name=${name}]`);
  sel.innerHTML = optionsView(values, sel.value || state.q[name] || '');
}

/**
 * The view (fleet filters, count pressed, page, incident range) lives in the page's address, so a
 * reload, a bookmark or a link sent to a colleague opens the same view. Other parameters of the
 * address (the read token) are kept as they are.
 */
function saveView(): void {
  const p = new URLSearchParams(location.search);
  for (const k of [...fleetKeys, 'flag', 'offset', 'since', 'instance']) p.delete(k);
  for (const k of fleetKeys) {
    const v = state.q[k];
    if (v) p.set(k, v);
  }
  if (state.flag) p.set('flag', state.flag);
  if (state.offset) p.set('offset', String(state.offset));
  if (state.since !== '24h') p.set('since', state.since);
  if (state.instance) p.set('instance', state.instance);
  const q = p.toString();
  history.replaceState(null, '', location.pathname + (q ? `?${q}` : '') + location.hash);
}

function restoreView(): void {
  const p = new URLSearchParams(location.search);
  const filters = $<HTMLFormElement>('#filters');
  const range = $<HTMLFormElement>('#range');
  const sinceField = field<HTMLSelectElement>(range, 'since');
  for (const k of fleetKeys) {
    const v = p.get(k);
    if (!v) continue;
    state.q[k] = v;
    const input = field<HTMLInputElement | HTMLSelectElement>(filters, k);
    if (input instanceof HTMLSelectElement && ![...input.options].some((o) => o.value === v))
      input.insertAdjacentHTML('beforeend', `<option>${esc(v)}</option>`);
    input.value = v;
  }
  state.flag = p.get('flag') || '';
  state.offset = Math.max(0, Number(p.get('offset')) || 0);
  const since = p.get('since');
  if (since && [...sinceField.options].some((o) => o.value === since)) {
    state.since = since;
    sinceField.value = since;
  }
  state.instance = p.get('instance') || '';
  field(range, 'instance').value = state.instance;
}

async function loadFleet(): Promise<void> {
  saveView();
  const p = new URLSearchParams({
    ...state.q,
    ...(state.flag ? { flag: state.flag } : {}),
    offset: String(state.offset),
    limit: String(state.limit),
  });
  let d: FleetPage;
  try {
    d = await get<FleetPage>(`/fleet?${p}`);
  } catch (e) {
    $('#fleet-table').textContent = `Could not read the fleet: ${message(e)}`;
    return;
  }
  state.page = d;
  $('#counts').innerHTML = countsView(d, state.flag);
  fillSelect('target', d.targets);
  fillSelect('project', d.projects);
  fillSelect('member', d.members);
  $('#fleet-table').innerHTML = fleetTableView(d, C.writable);
  $('#page-info').textContent = pageInfoText(d);
  $<HTMLButtonElement>('#prev').disabled = d.offset === 0;
  $<HTMLButtonElement>('#next').disabled = d.offset + d.rows.length >= d.matched;
  if (!window.__firstRender) {
    window.__firstRender = performance.now();
    document.body.dataset.rendered = 'fleet';
  }
}

async function loadIncidents(): Promise<void> {
  saveView();
  const p = new URLSearchParams({ since: state.since });
  if (state.instance) p.set('instance', state.instance);
  const d = await get<IncidentsAnswer>(`/incidents?${p}`);
  $('#incident-list').innerHTML = incidentsView(d);
  $('#alerts-body').innerHTML = alertsView(d, C.writable);
  const plots = d.plots;
  const restarts = d.restarts.length ? d.restarts.map((r) => ({ label: r.name, value: r.restarts })) : [{ label: 'none', value: 0 }];
  $('#plot-area').innerHTML =
    timeline(plots) +
    bars(
      `Time to heal${plots.unhealed ? ` (${plots.unhealed} not healed)` : ''}`,
      plots.heal.map((b) => ({ label: b.label, value: b.count })),
      'h',
    ) +
    bars('Restarts per instance in the budget window', restarts, 'i');
  $('#plots-h').textContent = `Plots${state.instance ? ` of ${state.instance}` : ' of the fleet'}`;
}

async function loadHealth(): Promise<void> {
  let h: Health;
  try {
    h = await get<Health>('/health');
  } catch (e) {
    $('#health-list').innerHTML = `<li class="bad">✖ console unreachable: ${esc(message(e))}</li>`;
    return;
  }
  $('#health-list').innerHTML = healthView(h);
}

async function loadDlq(): Promise<void> {
  $('#dlq-body').innerHTML = deadLettersView(await get<DeadLetters>('/dlq'), C.writable);
}

/** What a successful write did, in words. */
function doneText(a: WriteAnswer): string {
  if (a.released) return 'released';
  if (a.jobId) return `heal queued as job ${a.jobId}`;
  if (a.retried) return `retried ${a.retried}`;
  if (a.ended) return `ended silence ${a.ended}`;
  if (a.id) return `silence ${a.id} until ${utc(a.until)} UTC`;
  return JSON.stringify(a);
}

async function post(path: string, body: Record<string, unknown>): Promise<boolean> {
  const out = $('#action-result');
  const tokenField = $<HTMLInputElement>('#write-token');
  const token = tokenField.value;
  if (!token) {
    out.textContent = 'Type the write token first.';
    tokenField.focus();
    return false;
  }
  const actor = $<HTMLInputElement>('#actor').value.trim();
  const who = actor ? (path === '/silences' ? { createdBy: actor } : { actor }) : {};
  const r = await fetch(api + path, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ ...body, ...who }),
    credentials: 'same-origin',
  });
  const text = await r.text();
  let a: WriteAnswer;
  try {
    a = JSON.parse(text) as WriteAnswer;
  } catch {
    a = { error: text.trim() };
  }
  out.textContent = r.ok ? `✔ done: ${doneText(a)}` : `✖ refused (${r.status}): ${a.error || text}`;
  schedule('fleet', loadFleet);
  schedule('incidents', loadIncidents);
  schedule('dlq', loadDlq);
  schedule('health', loadHealth);
  return r.ok;
}

const rowOf = (key: string | undefined): FleetRow | undefined => state.page?.rows.find((r) => r.key === key);

async function toggleTrail(t: HTMLElement): Promise<void> {
  const box = t.nextElementSibling as HTMLElement;
  const open = t.getAttribute('aria-expanded') === 'true';
  t.setAttribute('aria-expanded', String(!open));
  if (open) {
    box.hidden = true;
    return;
  }
  box.hidden = false;
  box.textContent = 'reading…';
  const d = await get<{ records: TrailRecord[] }>(`/trail?${new URLSearchParams({ id: t.dataset.trail!, since: t.dataset.since! })}`);
  box.innerHTML = trailView(d.records);
}

document.addEventListener('click', async (ev) => {
  const t = (ev.target as Element).closest<HTMLElement>('button,a');
  if (!t) return;
  const data = t.dataset;
  if (data.flag !== undefined && t.closest('#counts')) {
    state.flag = data.flag;
    state.offset = 0;
    schedule('fleet', loadFleet);
    return;
  }
  if (data.instance !== undefined && t.tagName === 'A') {
    state.instance = data.instance;
    $<HTMLInputElement>('#range [name=instance]').value = state.instance;
    schedule('incidents', loadIncidents);
    return;
  }
  if (data.trail) return toggleTrail(t);
  if (data.retry) {
    await post('/dlq/retry', { id: data.retry });
    return;
  }
  if (data.endSilence) {
    await post(`/silences/${encodeURIComponent(data.endSilence)}/end`, {});
    return;
  }
  const r = data.act ? rowOf(data.key) : undefined;
  if (!r) return;
  const ref = { target: r.target, project: r.project, instance: r.name };
  if (data.act === 'heal') await post('/heal', ref);
  else if (data.act === 'release') await post('/quarantine/release', ref);
  else if (data.act === 'silence') {
    const f = $<HTMLFormElement>('#silence-form');
    field(f, 'instance').value = r.name;
    field(f, 'project').value = r.project;
    field(f, 'location').value = '';
    field(f, 'duration').focus();
  }
});
$('#prev').addEventListener('click', () => {
  state.offset = Math.max(0, state.offset - state.limit);
  schedule('fleet', loadFleet);
});
$('#next').addEventListener('click', () => {
  state.offset += state.limit;
  schedule('fleet', loadFleet);
});
$<HTMLFormElement>('#filters').addEventListener('submit', (ev) => {
  ev.preventDefault();
  state.q = {};
  for (const [k, v] of new FormData(ev.target as HTMLFormElement)) if (v) state.q[k as FleetKey] = String(v);
  state.offset = 0;
  schedule('fleet', loadFleet);
});
$<HTMLFormElement>('#range').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const f = ev.target as HTMLFormElement;
  state.since = field<HTMLSelectElement>(f, 'since').value;
  state.instance = field(f, 'instance').value.trim();
  schedule('incidents', loadIncidents);
});
// The operator's forms are in the page only when a write token is configured.
document.querySelector<HTMLFormElement>('#silence-form')?.addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const f = ev.target as HTMLFormElement;
  const scope: Record<string, string> = {};
  for (const k of ['instance', 'project', 'location']) if (field(f, k).value.trim()) scope[k] = field(f, k).value.trim();
  const mutes = ['actions', 'notifications'].filter((m) => field(f, m).checked);
  await post('/silences', { scope, duration: field(f, 'duration').value, reason: field(f, 'reason').value, mutes });
});
document.addEventListener('keydown', (ev) => {
  if (ev.key === '/' && !/INPUT|SELECT|TEXTAREA/.test(document.activeElement?.tagName ?? '')) {
    ev.preventDefault();
    $('#filters [name=filter]').focus();
  }
});

const live = (text: string) => {
  $('#live').textContent = text;
};
const source = new EventSource(`${api}/events`);
source.addEventListener('hello', () => live('● live'));
source.addEventListener('change', (ev) => {
  const c = JSON.parse((ev as MessageEvent<string>).data) as { fleet: boolean; audit: boolean };
  if (c.fleet) schedule('fleet', loadFleet);
  if (c.audit) {
    throttle('incidents', loadIncidents, 1000);
    throttle('dlq', loadDlq, 1000);
    throttle('health', loadHealth, 1000);
  }
});
source.onerror = () => live('○ reconnecting…');
restoreView();
schedule('fleet', loadFleet);
schedule('incidents', loadIncidents);
schedule('health', loadHealth);
schedule('dlq', loadDlq);
setInterval(() => schedule('health', loadHealth), 5000);
