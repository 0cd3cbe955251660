/**
 * The console's browser script (bundled into one inline script by `npm run build:console`, no
 * dependency). It reads the console API, renders one page of the fleet at a time (never the whole
 * fleet into the DOM), draws the plots as small hand-written SVG, and re-reads when the
 * server-sent change stream says so, patching the page in place (focus, open trails and scroll
 * survive). Every write asks for confirmation first, naming the instance and what will happen,
 * and carries the write token typed into the page as Authorization: Bearer, same-origin only.
 */
import type {
  ApprovalsAnswer,
  ApprovalView,
  Assignees,
  ConsoleSettings,
  DeadLetters,
  ExecutionsAnswer,
  FleetPage,
  FleetRow,
  Health,
  IncidentsAnswer,
  InstanceTimeline,
  SilencePreview,
  TrailRecord,
  WriteAnswer,
} from './console-wire.js';
import { absolute, clock, esc, relative, setTimeZone, type TimeZoneChoice } from './markup.js';
import { morph } from './morph.js';
import { executionsInfo, executionsView, timelineView } from './history-views.js';
import { bars, timeline } from './plots.js';
import { rangeText, readTimeField, timeOf, zoomOut, zoomTo } from './time-range.js';
import {
  approvalsView,
  alertsView,
  checkFails,
  countsView,
  deadLettersView,
  fleetTableView,
  healthView,
  incidentsView,
  optionsView,
  pageInfoText,
  trailView,
} from './views.js';

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
/** The incident filters' fields, in the address as in the form. */
const incidentKeys = ['kind', 'outcome', 'rule'] as const;
type IncidentKey = (typeof incidentKeys)[number];
const pageSizes = [25, 50, 100, 200, 500];
/** The executions filters' fields, in the address (prefixed `x-`) as in the form. */
const execKeys = ['source', 'action', 'result', 'instance', 'by'] as const;
type ExecKey = (typeof execKeys)[number];
const presets = ['15m', '1h', '6h', '24h', '7d', '30d'];
const execPage = 50;

const C = window.REFLEX_CONSOLE;
const api = C.api;
const roles = ['viewer', 'operator', 'admin'];
/**
 * Whether the page offers the actions of `role` (an operator's by default): a write token or an
 * operator is configured, and the signed-in user (if any) has the role; a viewer sees no buttons.
 * A token typed in names nobody the page knows: the server decides.
 */
const mayAct = (role: 'operator' | 'admin' = 'operator') => C.writable && (!C.signedIn || roles.indexOf(C.signedIn.role) >= roles.indexOf(role));
const state = {
  q: {} as Partial<Record<FleetKey, string>>,
  iq: {} as Partial<Record<IncidentKey, string>>,
  flag: '',
  offset: 0,
  limit: 50,
  /** The time range: `since` a preset or a time (ISO) or distance back; `until` the same, '' for now. */
  since: '24h',
  until: '',
  instance: '',
  xq: {} as Partial<Record<ExecKey, string>>,
  execOffset: 0,
  /** The instance of the state timeline, '' for none. */
  timeline: '',
  /** The rows on screen, in their order on screen. */
  shown: [] as FleetRow[],
  /** A newer page held back while the pointer is over the table (its rows would move). */
  held: null as FleetPage | null,
  pointerOnFleet: false,
  paused: false,
  /** Changes that arrived while paused. */
  missed: 0,
  reachable: true,
  /** Why Reflex counts as unreachable (no answer in time, the event stream closed). */
  unreachableWhy: '',
  /** Why Redis is down, as the health check says it; '' while it answers. */
  redisDown: '',
  /** Each target whose event stream is lost (health says so), and since when (epoch ms). */
  lost: new Map<string, number>(),
  /** The last fleet page read (its targets decide the table's columns). */
  lastPage: null as FleetPage | null,
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
const store = {
  get: (k: string) => {
    try {
      return localStorage.getItem(`reflex.console.${k}`);
    } catch {
      return null;
    }
  },
  set: (k: string, v: string) => {
    try {
      localStorage.setItem(`reflex.console.${k}`, v);
    } catch {
      // A browser that keeps nothing: the choice lasts for this page.
    }
  },
};

/** A read the server answered with an error (the server is up), as opposed to no answer at all. */
class Refused extends Error {}

/**
 * How long the health read may take before the page counts Reflex unreachable, ms: the server
 * answers it within 1.5 s whatever Redis and the daemon do, so no answer by then means Reflex
 * itself is not answering.
 */
const healthTimeoutMs = 4_000;
/**
 * How long any other read may take, ms: the server answers 503 within about 3 s when Redis stops
 * answering, but a read Redis serves slowly (a month of records at 10k instances) runs its course.
 */
const readTimeoutMs = 20_000;
/** How long a write may take: a heal checks the instance with the daemon first (10 s at most). */
const writeTimeoutMs = 15_000;

/** `fetch` with a deadline: past `ms`, the request is aborted and rejects saying so. */
async function fetchWithin(url: string, init: RequestInit, ms: number): Promise<{ r: Response; text: string }> {
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), ms);
  try {
    const r = await fetch(url, { ...init, signal: ctl.signal });
    return { r, text: await r.text() };
  } catch (e) {
    throw ctl.signal.aborted ? new Error(`no answer within ${ms / 1000} s`) : e;
  } finally {
    clearTimeout(timer);
  }
}

/** Reads `path` of the console's API; `liveness`: no answer in time means Reflex is not answering. */
async function get<T>(path: string, liveness = false): Promise<T> {
  let answer: { r: Response; text: string };
  try {
    answer = await fetchWithin(api + path, { credentials: 'same-origin' }, liveness ? healthTimeoutMs : readTimeoutMs);
  } catch (e) {
    // A refused connection is Reflex gone; a slow read is that read's panel's failure, unless it is the liveness read.
    if (liveness || !/^no answer within/.test(message(e))) markUnreachable(message(e));
    throw e;
  }
  const { r, text } = answer;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = { error: r.statusText };
  }
  if (!r.ok) throw new Refused(`${r.status}: ${(body as { error?: string }).error || r.statusText}`);
  return body as T;
}

// ---- Each panel's state: when its data was read, and whether it is stale or failed. ----

type Panel = 'fleet' | 'health' | 'approvals' | 'incidents' | 'alerts' | 'dlq' | 'plots' | 'executions' | 'timeline';
const panelNames: Record<Panel, string> = {
  fleet: 'fleet',
  approvals: 'approvals',
  health: 'health',
  incidents: 'incidents',
  alerts: 'alerts and silences',
  dlq: 'dead letters',
  plots: 'plots',
  executions: 'executions',
  timeline: 'state timeline',
};
const readAt: Partial<Record<Panel, number>> = {};
const failed: Partial<Record<Panel, string>> = {};

/** When the data shown was read, and how long ago: "data from 19:44:05 UTC (12 s ago)". */
const dataAge = (p: Panel) =>
  readAt[p] ? `data from ${clock(readAt[p]!)} (${relative(readAt[p]!).replace('just now', 'a moment ago')})` : 'no data';

function showPanelState(p: Panel): void {
  const el = $(`#${p}-state`);
  const section = $(`#${p}`);
  let text = '';
  let cls = '';
  if (!state.reachable) {
    text = `${dataAge(p)}: Reflex unreachable${state.unreachableWhy ? ` (${state.unreachableWhy})` : ''}, reconnecting…`;
    cls = 'stale';
  } else if (state.redisDown && p !== 'health') {
    // Reflex answers from what it holds in memory while Redis is down: nothing it shows is current.
    text = `${dataAge(p)}: Redis unreachable, not live (${state.redisDown})`;
    cls = 'stale';
  } else if (p === 'fleet' && state.lost.size && !failed[p]) {
    const since = Math.min(...state.lost.values());
    text = `statuses are last known: the daemon's event stream${state.lost.size > 1 ? 's' : ''} of ${[...state.lost.keys()].join(', ')} lost since ${clock(since)} (${relative(since)}), reconnecting…`;
    cls = 'stale';
  } else if (failed[p]) {
    text = `${panelNames[p]}: could not read (${failed[p]}); ${readAt[p] ? `showing ${dataAge(p)}` : 'nothing to show'}`;
    cls = 'bad';
  }
  el.hidden = !text;
  el.textContent = text;
  el.className = `panel-state ${cls}`;
  section.dataset.state = cls || 'fresh';
}
function panelRead(p: Panel): void {
  // With Redis down, what Reflex answers is what it read before: the data keeps the age it had.
  if (!state.redisDown || !readAt[p]) readAt[p] = Date.now();
  delete failed[p];
  showPanelState(p);
}
function panelFailed(p: Panel, e: unknown): void {
  failed[p] = message(e) || 'no answer';
  showPanelState(p);
}
const panels = Object.keys(panelNames) as Panel[];
function markUnreachable(why = ''): void {
  if (!state.reachable) return;
  state.reachable = false;
  state.unreachableWhy = why;
  document.body.dataset.stale = 'true';
  live(`○ Reflex unreachable${why ? ` (${why})` : ''}: reconnecting…`);
  panels.forEach(showPanelState);
}
function markReachable(): void {
  const was = state.reachable;
  state.reachable = true;
  state.unreachableWhy = '';
  if (!state.redisDown) delete document.body.dataset.stale;
  panels.forEach(showPanelState);
  showLive();
  if (!was) reloadAll();
}
/**
 * Which targets' event streams are lost, from the health answer: the subscriber check's detail says
 * how long ago ("lost 3 s ago"), else the page counts from when it first saw it. The fleet marks
 * their statuses last known; a change of the set redraws it (and a recovery reads it again).
 */
function markStreams(h: Health): void {
  const now = Date.now();
  const before = [...state.lost.keys()].join();
  const next = new Map<string, number>();
  for (const s of h.streams) {
    if (s.connected) continue;
    const check = h.checks[h.streams.length === 1 ? 'subscriber' : `subscriber:${s.target}`] ?? h.checks[`subscriber:${s.target}`];
    const ago = check && /lost (?:for )?(\d+(?:\.\d+)?) ?s\b/.exec(check.detail);
    next.set(s.target, state.lost.get(s.target) ?? (ago ? now - Number(ago[1]) * 1_000 : now));
  }
  for (const [name, c] of Object.entries(h.checks)) {
    if (!/^subscriber/.test(name) || !checkFails(name, c, h)) continue;
    const target = name.includes(':') ? name.slice(name.indexOf(':') + 1) : h.streams[0]?.target;
    if (target && !next.has(target)) next.set(target, state.lost.get(target) ?? now);
  }
  state.lost = next;
  if ([...next.keys()].join() === before) return;
  showPanelState('fleet');
  if (next.size) {
    if (state.shown.length) redrawFleet();
  } else schedule('fleet', loadFleet);
}
/** Since when the event stream of a row's target is lost, if it is. */
const lostSince = (r: FleetRow): number | undefined =>
  state.lost.get(r.target) ?? ((state.lastPage?.targets.length ?? 1) <= 1 && state.lost.size ? Math.min(...state.lost.values()) : undefined);
/** Draws the rows on screen again (their marks changed, not their data). */
function redrawFleet(): void {
  patch($('#fleet-table'), fleetTableView({ ...(state.lastPage ?? emptyPage), rows: state.shown }, C.writable, lostSince));
}
const emptyPage: FleetPage = { total: 0, matched: 0, offset: 0, rows: [], counts: {}, targets: [], projects: [], members: [] };

/** What the health check says of Redis: down (its detail), or up again (everything is read again). */
function markRedis(check: { ok: boolean; detail: string } | undefined): void {
  const down = check && !check.ok ? check.detail : '';
  if (down === state.redisDown) return;
  const was = state.redisDown;
  state.redisDown = down;
  if (down) document.body.dataset.stale = 'true';
  else if (state.reachable) delete document.body.dataset.stale;
  panels.forEach(showPanelState);
  showLive();
  if (was && !down) reloadAll();
}
// The ages shown move on while a panel is stale or failed.
setInterval(() => {
  if (!state.reachable || state.redisDown || state.lost.size || panels.some((p) => failed[p])) panels.forEach(showPanelState);
}, 1_000);

// ---- Loads: never two of a kind at once, and a live storm is throttled. ----

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

/**
 * Patches `el` to `html` in place (see morph.ts), and gives the focus back if a moved node lost it:
 * a live update never takes the operator's place on the page.
 */
function patch(el: Element, html: string): void {
  const focused = document.activeElement;
  // What the focused control is, should the patch have to rebuild it: its id, or its action and instance.
  const identity =
    focused instanceof HTMLElement && el.contains(focused)
      ? focused.id
        ? `#${CSS.escape(focused.id)}`
        : focused.getAttribute('aria-label')
          ? `${focused.tagName.toLowerCase()}[aria-label="${CSS.escape(focused.getAttribute('aria-label')!)}"]`
          : undefined
      : undefined;
  const x = window.scrollX;
  const y = window.scrollY;
  morph(el, html);
  if (focused instanceof HTMLElement && focused !== document.activeElement) {
    const again = focused.isConnected ? focused : identity ? el.querySelector<HTMLElement>(identity) : null;
    again?.focus({ preventScroll: true });
  }
  if (window.scrollX !== x || window.scrollY !== y) window.scrollTo(x, y);
}

function fillSelect(sel: HTMLSelectElement, values: string[], current: string): void {
  patch(sel, optionsView(values, sel.value || current));
}

/**
 * The view (fleet filters, count pressed, page, incident range and filters) lives in the page's
 * address, so a reload, a bookmark or a link sent to a colleague opens the same view. Other
 * parameters of the address (the read token) are kept as they are.
 */
function saveView(): void {
  const p = new URLSearchParams(location.search);
  for (const k of [
    ...fleetKeys,
    ...incidentKeys,
    ...execKeys.map((k) => `x-${k}`),
    'flag',
    'offset',
    'limit',
    'since',
    'until',
    'instance',
    'timeline',
  ])
    p.delete(k);
  for (const k of fleetKeys) {
    const v = state.q[k];
    if (v) p.set(k, v);
  }
  if (state.flag) p.set('flag', state.flag);
  if (state.offset) p.set('offset', String(state.offset));
  if (state.limit !== 50) p.set('limit', String(state.limit));
  if (state.since !== '24h') p.set('since', state.since);
  if (state.until) p.set('until', state.until);
  if (state.instance) p.set('instance', state.instance);
  if (state.timeline) p.set('timeline', state.timeline);
  for (const k of execKeys) {
    const v = state.xq[k];
    if (v) p.set(`x-${k}`, v);
  }
  for (const k of incidentKeys) {
    const v = state.iq[k];
    if (v) p.set(k, v);
  }
  const q = p.toString();
  history.replaceState(null, '', location.pathname + (q ? `?${q}` : '') + location.hash);
}

function restoreView(): void {
  const p = new URLSearchParams(location.search);
  const filters = $<HTMLFormElement>('#filters');
  const range = $<HTMLFormElement>('#range');
  const setField = (input: HTMLInputElement | HTMLSelectElement, v: string) => {
    if (input instanceof HTMLSelectElement && ![...input.options].some((o) => o.value === v))
      input.insertAdjacentHTML('beforeend', `<option>${esc(v)}</option>`);
    input.value = v;
  };
  for (const k of fleetKeys) {
    const v = p.get(k);
    if (!v) continue;
    state.q[k] = v;
    setField(field<HTMLInputElement | HTMLSelectElement>(filters, k), v);
  }
  for (const k of incidentKeys) {
    const v = p.get(k);
    if (!v) continue;
    state.iq[k] = v;
    setField(field<HTMLSelectElement>(range, k), v);
  }
  state.flag = p.get('flag') || '';
  state.offset = Math.max(0, Number(p.get('offset')) || 0);
  const limit = Number(p.get('limit') || store.get('limit'));
  if (pageSizes.includes(limit)) state.limit = limit;
  $<HTMLSelectElement>('#page-size').value = String(state.limit);
  state.instance = p.get('instance') || '';
  field(range, 'instance').value = state.instance;
  const tz = store.get('tz') === 'local' ? 'local' : 'utc';
  setTimeZone(tz);
  $<HTMLSelectElement>('#tz').value = tz;
  state.since = p.get('since') || '24h';
  state.until = p.get('until') || '';
  showRange();
  const xf = $<HTMLFormElement>('#exec-filters');
  for (const k of execKeys) {
    const v = p.get(`x-${k}`);
    if (!v) continue;
    state.xq[k] = v;
    setField(field<HTMLInputElement | HTMLSelectElement>(xf, k), v);
  }
  state.timeline = p.get('timeline') || '';
  field($<HTMLFormElement>('#timeline-form'), 'instance').value = state.timeline;
}

/** The range form shows the range in the state: a preset in the select, anything else as from/until. */
function showRange(): void {
  const f = $<HTMLFormElement>('#timerange');
  const preset = !state.until && presets.includes(state.since);
  field<HTMLSelectElement>(f, 'since').value = preset ? state.since : 'custom';
  field(f, 'from').value = preset ? '' : state.since;
  field(f, 'until').value = state.until;
  $('#range-text').textContent = rangeText(state.since, state.until);
}

/** The range as query parameters of a read. */
function rangeParams(): Record<string, string> {
  return { since: state.since, ...(state.until ? { until: state.until } : {}) };
}

/** Applies a new range to incidents, plots, executions and the timeline. */
function setRange(since: string, until: string): void {
  state.since = since;
  state.until = until;
  state.execOffset = 0;
  showRange();
  saveView();
  schedule('incidents', loadIncidents);
  schedule('executions', loadExecutions);
  if (state.timeline) schedule('timeline', loadTimeline);
}

// ---- The fleet ----

/** How many rows of `next` are not where they are on screen (new, gone, or moved). */
function movedRows(next: FleetRow[]): number {
  const shownAt = new Map(state.shown.map((r, i) => [r.key, i]));
  const nextKeys = new Set(next.map((r) => r.key));
  let n = state.shown.filter((r) => !nextKeys.has(r.key)).length;
  next.forEach((r, i) => {
    if (shownAt.get(r.key) !== i) n++;
  });
  return n;
}

function drawFleet(d: FleetPage, live: boolean): void {
  let rows = d.rows;
  const moved = live && state.pointerOnFleet ? movedRows(d.rows) : 0;
  const bar = $<HTMLButtonElement>('#changes-bar');
  if (moved) {
    // Rows never move under the pointer: the rows on screen stay in place with their new data; the new order waits.
    const byKey = new Map(d.rows.map((r) => [r.key, r]));
    rows = state.shown.map((r) => byKey.get(r.key) ?? r);
    state.held = d;
    bar.textContent = `${moved} change${moved === 1 ? '' : 's'} in the order — show`;
    bar.hidden = false;
  } else {
    state.held = null;
    bar.hidden = true;
  }
  state.shown = rows;
  patch($('#counts'), countsView(d, state.flag));
  fillSelect($<HTMLSelectElement>('#filters [name=target]'), d.targets, state.q.target || '');
  fillSelect($<HTMLSelectElement>('#filters [name=project]'), d.projects, state.q.project || '');
  fillSelect($<HTMLSelectElement>('#filters [name=member]'), d.members, state.q.member || '');
  state.lastPage = d;
  patch($('#fleet-table'), fleetTableView({ ...d, rows }, C.writable, lostSince));
  $('#page-info').textContent = pageInfoText(d);
  const pages = Math.max(1, Math.ceil(d.matched / state.limit));
  const jump = $<HTMLInputElement>('#page-jump');
  jump.max = String(pages);
  if (document.activeElement !== jump) jump.value = String(Math.floor(d.offset / state.limit) + 1);
  $('#page-count').textContent = `of ${pages}`;
  $<HTMLButtonElement>('#prev').disabled = d.offset === 0;
  $<HTMLButtonElement>('#next').disabled = d.offset + d.rows.length >= d.matched;
}

async function readFleet(live: boolean): Promise<void> {
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
    panelFailed('fleet', e);
    // A filter the operator got wrong replaces the table (the rows shown would not be what was asked for).
    if (e instanceof Refused && (/^400: filter:/.test(message(e)) || !state.shown.length)) {
      $('#fleet-table').textContent = `Could not read the fleet: ${message(e).replace(/^\d+: /, '')}`;
      state.shown = [];
    }
    return;
  }
  panelRead('fleet');
  drawFleet(d, live);
  if (!window.__firstRender) {
    window.__firstRender = performance.now();
    document.body.dataset.rendered = 'fleet';
  }
}
const loadFleet = () => readFleet(false);
const liveFleet = () => readFleet(true);

// ---- Incidents, alerts, plots ----

/** Reads the audit trail an incident's button opened: of the incident the entry shows now (a crash loop's newest). */
async function refreshTrail(button: HTMLElement): Promise<void> {
  const box = button.nextElementSibling as HTMLElement;
  const entry = button.closest<HTMLElement>('li.incident')?.dataset;
  const id = entry?.correlation ?? button.dataset.trail!;
  const since = entry?.since ?? button.dataset.since!;
  const d = await get<{ records: TrailRecord[] }>(`/trail?${new URLSearchParams({ id, since })}`);
  patch(box, trailView(d.records));
}

async function loadIncidents(): Promise<void> {
  saveView();
  const p = new URLSearchParams(rangeParams());
  if (state.instance) p.set('instance', state.instance);
  for (const k of incidentKeys) if (state.iq[k]) p.set(k, state.iq[k]!);
  let d: IncidentsAnswer;
  try {
    d = await get<IncidentsAnswer>(`/incidents?${p}`);
  } catch (e) {
    for (const panel of ['incidents', 'alerts', 'plots'] as const) panelFailed(panel, e);
    return;
  }
  for (const panel of ['incidents', 'alerts', 'plots'] as const) panelRead(panel);
  patch($('#incident-list'), incidentsView(d, mayAct()));
  patch($('#alerts-body'), alertsView(d, C.writable));
  fillSelect($<HTMLSelectElement>('#range [name=rule]'), d.rules, state.iq.rule || '');
  const plots = d.plots;
  const restarts = d.restarts.length ? d.restarts.map((r) => ({ label: r.name, value: r.restarts })) : [{ label: 'none', value: 0 }];
  patch(
    $('#plot-area'),
    timeline(plots) +
      bars(
        `Time to heal${plots.unhealed ? ` (${plots.unhealed} not healed)` : ''}`,
        plots.heal.map((b) => ({ label: b.label, value: b.count })),
        'h',
      ) +
      bars('Restarts per instance in the budget window', restarts, 'i'),
  );
  $('#plots-h').textContent = `Plots${state.instance ? ` of ${state.instance}` : ' of the fleet'}`;
  // An open trail stays open, and shows its new records.
  for (const b of document.querySelectorAll<HTMLElement>('#incident-list button[data-trail][aria-expanded=true]'))
    refreshTrail(b).catch(() => undefined);
}

async function loadExecutions(): Promise<void> {
  saveView();
  const p = new URLSearchParams({ ...rangeParams(), offset: String(state.execOffset), limit: String(execPage) });
  for (const k of execKeys) if (state.xq[k]) p.set(k, state.xq[k]!);
  let d: ExecutionsAnswer;
  try {
    d = await get<ExecutionsAnswer>(`/executions?${p}`);
  } catch (e) {
    panelFailed('executions', e);
    return;
  }
  panelRead('executions');
  fillSelect($<HTMLSelectElement>('#exec-filters [name=action]'), d.actions, state.xq.action || '');
  patch($('#exec-table'), executionsView(d, C.writable));
  $('#exec-info').textContent = executionsInfo(d);
  $<HTMLButtonElement>('#exec-prev').disabled = d.offset === 0;
  $<HTMLButtonElement>('#exec-next').disabled = d.offset + d.executions.length >= d.matched;
}

async function loadTimeline(): Promise<void> {
  if (!state.timeline) return;
  saveView();
  let t: InstanceTimeline;
  try {
    t = await get<InstanceTimeline>(`/timeline?${new URLSearchParams({ ...rangeParams(), instance: state.timeline })}`);
  } catch (e) {
    panelFailed('timeline', e);
    return;
  }
  panelRead('timeline');
  $('#timeline-h').textContent = `State timeline of ${t.instance}`;
  patch($('#timeline-body'), timelineView(t));
}

/** Shows the state timeline of `name` and brings it into view. */
function openTimeline(name: string): void {
  state.timeline = name;
  field($<HTMLFormElement>('#timeline-form'), 'instance').value = name;
  schedule('timeline', loadTimeline);
}

async function loadHealth(): Promise<void> {
  let h: Health;
  try {
    h = await get<Health>('/health', true);
  } catch (e) {
    panelFailed('health', e);
    return;
  }
  markReachable();
  panelRead('health');
  markRedis(h.checks.redis);
  markStreams(h);
  patch($('#health-list'), healthView(h));
}

async function loadDlq(): Promise<void> {
  let d: DeadLetters;
  try {
    d = await get<DeadLetters>('/dlq');
  } catch (e) {
    panelFailed('dlq', e);
    return;
  }
  panelRead('dlq');
  patch($('#dlq-body'), deadLettersView(d, C.writable));
}

/** The approval a signed link opened (`?approval=ID`): marked and scrolled to once it is drawn. */
const focusApproval = new URLSearchParams(location.search).get('approval') ?? '';
let focusedOnce = false;
let approvalsShown: ApprovalView[] = [];

async function loadApprovals(): Promise<void> {
  let d: ApprovalsAnswer;
  try {
    d = await get<ApprovalsAnswer>('/approvals');
  } catch (e) {
    panelFailed('approvals', e);
    return;
  }
  panelRead('approvals');
  approvalsShown = d.approvals;
  patch($('#approvals-body'), approvalsView(d.approvals, mayAct, focusApproval));
  const waiting = d.approvals.filter((a) => a.status === 'pending').length;
  $('#approvals-h').textContent = waiting ? `Approvals (${waiting} waiting)` : 'Approvals';
  if (focusApproval && !focusedOnce) {
    focusedOnce = true;
    const el = document.getElementById(`approval-${focusApproval}`);
    if (!el) $('#approvals-state').textContent = `approval ${focusApproval} is not among the waiting or the recently decided`;
    el?.scrollIntoView({ block: 'center' });
    (el?.querySelector<HTMLElement>('button[data-decide]') ?? el)?.focus();
  }
}

/** Confirms and sends a decision on the approval a button names (`data-decide`: approved, denied), with an optional reason. */
async function decide(t: HTMLElement): Promise<void> {
  const data = t.dataset;
  const a = approvalsShown.find((x) => x.id === data.approval);
  const name = data.instanceName ?? '';
  const what = `${data.actions ?? ''} of ${name}`;
  const approve = data.decide === 'approved';
  const asked = confirmAction(
    approve ? `Approve ${what}?` : `Deny ${what}?`,
    approve
      ? `Reflex queues ${what}${a ? ` (project ${a.project}, rule ${a.rule})` : ''} and re-checks it when it runs (an operator's stop or start since, a silence, a quarantine skip it). Audited as you.`
      : `Nothing is done to ${name}; the request is closed for everyone. Audited as you.`,
    approve ? `Approve ${what}` : `Deny ${what}`,
    `<label>Reason (optional) <input id="approval-reason" name="reason" autocomplete="off" maxlength="500"></label>`,
  );
  const field = $<HTMLInputElement>('#approval-reason');
  // Enter in the reason would submit the dialog's form with its first button (Cancel).
  field.addEventListener('keydown', (ev) => ev instanceof KeyboardEvent && ev.key === 'Enter' && ev.preventDefault());
  if (!(await asked)) return;
  const reason = field.value.trim();
  await post(`/approvals/${encodeURIComponent(data.approval!)}/decide`, { verdict: data.decide!, ...(reason ? { reason } : {}) });
}

function reloadAll(): void {
  schedule('approvals', loadApprovals);
  schedule('fleet', loadFleet);
  schedule('incidents', loadIncidents);
  schedule('health', loadHealth);
  schedule('dlq', loadDlq);
  schedule('executions', loadExecutions);
  if (state.timeline) schedule('timeline', loadTimeline);
}

// ---- Writes: confirmed, then sent with the write token ----

/** What a successful write did, in words. */
function doneText(a: WriteAnswer): string {
  if (a.triaged) return a.triaged;
  if (a.decided) return a.decided;
  if (a.released) return 'released';
  if (a.jobId) return `heal queued as job ${a.jobId}`;
  if (a.retried) return `retried ${a.retried}`;
  if (a.ended) return `ended silence ${a.ended}`;
  if (a.id) return `silence ${a.id} until ${absolute(a.until)} (${relative(a.until!)})`;
  return JSON.stringify(a);
}

/**
 * How long the confirming button takes no click after its dialog opens, ms: the second click of a
 * double-click on the button that opened it (or a click meant for what was under the pointer)
 * lands within it, wherever the dialog is drawn.
 */
const confirmArmMs = 400;
let armTimer = 0;

/**
 * Asks the operator to confirm an action in a modal dialog: `title` names the action and the
 * instance, `text` says what will happen, the confirming button is named by `ok` ("Heal web-1").
 * Cancel (or Escape) is the default, and the confirming button is armed only after {@link confirmArmMs}.
 */
function confirmAction(title: string, text: string, ok: string, extra = ''): Promise<boolean> {
  const dialog = $<HTMLDialogElement>('#confirm');
  const okButton = $<HTMLButtonElement>('#confirm-ok');
  $('#confirm-title').textContent = title;
  $('#confirm-text').textContent = text;
  $('#confirm-extra').innerHTML = extra;
  okButton.textContent = ok;
  okButton.disabled = true;
  dialog.returnValue = '';
  dialog.showModal();
  $('#confirm-cancel').focus();
  // A dialog opened again soon after the last one is armed from its own opening, not the last one's.
  clearTimeout(armTimer);
  armTimer = setTimeout(() => (okButton.disabled = false), confirmArmMs);
  return new Promise((resolve) => dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true }));
}

async function post(path: string, body: Record<string, unknown>): Promise<boolean> {
  const out = $('#action-result');
  // Signed in (a session): the cookie carries who acts; a token typed in still takes its place.
  const tokenField = document.querySelector<HTMLInputElement>('#write-token');
  const token = tokenField?.value ?? '';
  if (!token && !C.signedIn) {
    out.textContent = C.identity === 'users' ? 'Type your token first.' : 'Type the write token first.';
    tokenField?.focus();
    return false;
  }
  const actor = document.querySelector<HTMLInputElement>('#actor')?.value.trim();
  // A decision on an approval is the signed-in user's (or the write token's), never a typed name.
  const who = actor && !path.startsWith('/approvals/') ? (path === '/silences' ? { createdBy: actor } : { actor }) : {};
  let r: Response;
  let text: string;
  try {
    ({ r, text } = await fetchWithin(
      api + path,
      {
        method: 'POST',
        headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), 'Content-Type': 'application/json' },
        body: JSON.stringify({ ...body, ...who }),
        credentials: 'same-origin',
      },
      writeTimeoutMs,
    ));
  } catch (e) {
    out.textContent = `✖ not confirmed: Reflex did not answer (${message(e)}); reload to see whether it was done`;
    markUnreachable(message(e));
    return false;
  }
  let a: WriteAnswer;
  try {
    a = JSON.parse(text) as WriteAnswer;
  } catch {
    a = { error: text.trim() };
  }
  out.textContent = r.ok ? `✔ done: ${doneText(a)}` : `✖ refused (${r.status}): ${a.error || text}`;
  reloadAll();
  return r.ok;
}

const rowOf = (key: string | undefined): FleetRow | undefined => state.shown.find((r) => r.key === key);
const where = (r: FleetRow) => `project ${r.project}${r.target ? ` on ${r.target}` : ''}`;

async function act(kind: string, r: FleetRow): Promise<void> {
  const ref = { target: r.target, project: r.project, instance: r.name };
  if (kind === 'heal') {
    const what =
      r.statusCode === 102
        ? `Reflex will queue a start of ${r.name} (${where(r)}), now ${r.status}.`
        : `Reflex will queue a heal of ${r.name} (${where(r)}), now ${r.status}: a start, or a restart if it runs.`;
    const ok = await confirmAction(
      `Heal ${r.name}?`,
      `${what} It runs even if a silence or a quarantine holds the rules back, and is audited under your name.`,
      `Heal ${r.name}`,
    );
    if (ok) await post('/heal', ref);
  } else if (kind === 'release') {
    const ok = await confirmAction(
      `Release ${r.name} from quarantine?`,
      `Reflex's rules will act on ${r.name} (${where(r)}) again and its restart history is forgotten: if it still crashes, it is restarted again.`,
      `Release ${r.name}`,
    );
    if (ok) await post('/quarantine/release', ref);
  } else if (kind === 'silence') {
    const f = $<HTMLFormElement>('#silence-form');
    field(f, 'instance').value = r.name;
    field(f, 'project').value = r.project;
    field(f, 'location').value = '';
    field(f, 'duration').focus();
    previewSoon();
  }
}

// ---- Triage: acknowledge, assign, annotate an incident ----

/** Confirms and sends one triage step of the incident a button names (`data-triage`: ack, assign, note). */
async function triage(t: HTMLElement): Promise<void> {
  const data = t.dataset;
  const name = data.instanceName ?? '';
  const ref = { id: data.correlation!, since: data.since! };
  if (data.triage === 'ack') {
    const ok = await confirmAction(
      `Acknowledge the incident of ${name}?`,
      `Everyone watching sees that you are on it, and its receivers get the update of its alert. It is audited under your name.`,
      `Acknowledge ${name}`,
    );
    if (ok) await post('/incidents/triage', { ...ref, ack: true });
    return;
  }
  const assign = data.triage === 'assign';
  let who: Assignees = { names: [], open: true };
  if (assign) who = await get<Assignees>('/assignees').catch(() => who);
  const input = assign
    ? `<label>Assign to <input id="triage-input" name="assignee" list="assignee-names" autocomplete="off" maxlength="100"></label>` +
      `<datalist id="assignee-names">${who.names.map((n) => `<option value="${esc(n)}">`).join('')}</datalist>`
    : `<label>Note <textarea id="triage-input" name="note" rows="3" maxlength="2000"></textarea></label>`;
  const asked = confirmAction(
    assign ? `Assign the incident of ${name}?` : `Add a note to the incident of ${name}?`,
    assign
      ? `The user you name owns the incident from now on; everyone watching sees it and its receivers get the update of its alert. Audited under your name.`
      : `Everyone watching sees the note and its receivers get it as an update of its alert. Audited under your name.`,
    assign ? `Assign ${name}` : `Add the note to ${name}`,
    input,
  );
  const field = $<HTMLInputElement | HTMLTextAreaElement>('#triage-input');
  // Enter in the name would submit the dialog's form with its first button (Cancel).
  field.addEventListener('keydown', (ev) => ev instanceof KeyboardEvent && ev.key === 'Enter' && field.tagName === 'INPUT' && ev.preventDefault());
  field.focus();
  if (!(await asked)) return;
  const value = field.value.trim();
  if (!value) {
    $('#action-result').textContent = assign ? '✖ not assigned: name a user' : '✖ no note added: the note was empty';
    return;
  }
  await post('/incidents/triage', assign ? { ...ref, assign: value } : { ...ref, note: value });
}

// ---- The silence form: a preview of what it matches now, and a reason in words when it is long or broad ----

function silenceScope(f: HTMLFormElement): Record<string, string> {
  const scope: Record<string, string> = {};
  for (const k of ['instance', 'project', 'location']) if (field(f, k).value.trim()) scope[k] = field(f, k).value.trim();
  return scope;
}
const silenceMutes = (f: HTMLFormElement) => ['actions', 'notifications'].filter((m) => field(f, m).checked);

async function previewOf(f: HTMLFormElement): Promise<SilencePreview> {
  const p = new URLSearchParams({ ...silenceScope(f), mutes: silenceMutes(f).join(','), duration: field(f, 'duration').value.trim() });
  return get<SilencePreview>(`/silences/preview?${p}`);
}
function previewText(p: SilencePreview): string {
  if (!p.matches) return 'matches no instance now';
  const more = p.matches > p.names.length ? `, and ${p.matches - p.names.length} more` : '';
  return `matches ${p.matches} instance${p.matches === 1 ? '' : 's'} now: ${p.names.join(', ')}${more}`;
}
let previewTimer = 0;
function previewSoon(): void {
  const f = document.querySelector<HTMLFormElement>('#silence-form');
  if (!f) return;
  clearTimeout(previewTimer);
  previewTimer = setTimeout(() => {
    previewOf(f)
      .then((p) => ($('#silence-preview').textContent = Object.keys(silenceScope(f)).length ? previewText(p) : ''))
      .catch(() => undefined);
  }, 250);
}
const wordsIn = (s: string) =>
  s
    .trim()
    .split(/\s+/)
    .filter((w) => /\w/.test(w)).length;

async function addSilence(f: HTMLFormElement): Promise<void> {
  const out = $('#action-result');
  const scope = silenceScope(f);
  const duration = field(f, 'duration').value.trim();
  const reason = field(f, 'reason').value;
  let p: SilencePreview;
  try {
    p = await previewOf(f);
  } catch (e) {
    out.textContent = `✖ could not preview the silence: ${message(e)}`;
    return;
  }
  if (p.reasonNeeded && (wordsIn(reason) < 3 || reason.trim().length < 15)) {
    out.textContent = `✖ this silence ${p.matches > 1 ? `${previewText(p)}` : 'lasts more than a day'}: give a reason of at least 3 words (what, why, a ticket).`;
    field(f, 'reason').focus();
    return;
  }
  const scopeText =
    Object.entries(scope)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ') || 'everything';
  const mutes = silenceMutes(f);
  const name = scope.instance && p.matches <= 1 ? scope.instance : `${p.matches} instances`;
  const ok = await confirmAction(
    `Silence ${name} for ${duration}?`,
    `While it lasts, ${mutes.join(' and ') || 'nothing'} ${mutes.length > 1 ? 'are' : 'is'} muted for ${scopeText}: ` +
      `${mutes.includes('actions') ? 'Reflex will not heal what crashes there. ' : ''}It ${previewText(p)}.`,
    `Silence ${name}`,
    `<p class="muted">Reason: ${esc(reason)}</p>`,
  );
  if (ok) await post('/silences', { scope, duration, reason, mutes });
}

// ---- Events ----

document.addEventListener('click', async (ev) => {
  const t = (ev.target as Element).closest<HTMLElement>('button,a');
  if (!t || t.closest('dialog')) return;
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
  if (data.timeline !== undefined) {
    openTimeline(data.timeline);
    return;
  }
  if (data.trailOf) {
    // A trail from the timeline, an execution or an alert: the incidents' list, narrowed to that instance, opens it where it is shown.
    await showTrailOf(data.trailOf, t);
    return;
  }
  if (data.rerun) {
    const name = data.instanceName ?? '';
    const ok = await confirmAction(
      `Re-run ${data.action} on ${name}?`,
      `Reflex will queue a start of ${name} (project ${data.project} on ${data.target}) now, as an operator's heal: starting an instance that runs changes nothing. It is audited under your name.`,
      `Re-run ${data.action} on ${name}`,
    );
    if (ok) await post('/heal', { target: data.target, project: data.project, instance: name });
    return;
  }
  if (data.trail) {
    const box = t.nextElementSibling as HTMLElement;
    const open = t.getAttribute('aria-expanded') === 'true';
    t.setAttribute('aria-expanded', String(!open));
    box.hidden = open;
    if (!open) {
      box.textContent = 'reading…';
      await refreshTrail(t).catch((e) => (box.textContent = `could not read the trail (${message(e)})`));
    }
    return;
  }
  if (data.retry) {
    const ok = await confirmAction(
      `Retry the failed job on ${data.instanceName}?`,
      `Reflex will run the dead-lettered job ${data.retry} (${t.getAttribute('aria-label')?.replace(/^Retry /, '') ?? ''}) again now: its action runs on ${data.instanceName} as if the rule had just decided it.`,
      `Retry on ${data.instanceName}`,
    );
    if (ok) await post('/dlq/retry', { id: data.retry });
    return;
  }
  if (data.triage) {
    await triage(t);
    return;
  }
  if (data.decide) {
    await decide(t);
    return;
  }
  if (data.endSilence) {
    const ok = await confirmAction(
      `End the silence of ${data.scope}?`,
      `Reflex's rules act again on ${data.scope}, and its alerts are notified again, from now on.`,
      `End silence of ${data.scope}`,
    );
    if (ok) await post(`/silences/${encodeURIComponent(data.endSilence)}/end`, {});
    return;
  }
  const r = data.act ? rowOf(data.key) : undefined;
  if (r && data.act) await act(data.act, r);
});
$('#changes-bar').addEventListener('click', () => {
  if (state.held) drawFleet(state.held, false);
});
const fleetTable = $('#fleet-table');
fleetTable.addEventListener('pointerenter', () => (state.pointerOnFleet = true));
// The held order waits for the bar, or for the next update with the pointer elsewhere.
fleetTable.addEventListener('pointerleave', () => (state.pointerOnFleet = false));
$<HTMLFormElement>('#timerange').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const f = ev.target as HTMLFormElement;
  const preset = field<HTMLSelectElement>(f, 'since').value;
  const from = readTimeField(field(f, 'from').value);
  const until = readTimeField(field(f, 'until').value);
  if (from === undefined || until === undefined) {
    $('#range-text').textContent = '✖ from and until: a time (2026-11-25 18:00) or a distance back (90m, 2d)';
    return;
  }
  if (from && until && timeOf(from) >= timeOf(until)) {
    $('#range-text').textContent = '✖ from must be before until';
    return;
  }
  if (preset !== 'custom' && !from && !until) setRange(preset, '');
  else setRange(from || preset.replace('custom', '24h'), until);
});
$<HTMLSelectElement>('#timerange [name=since]').addEventListener('change', (ev) => {
  const v = (ev.target as HTMLSelectElement).value;
  if (v !== 'custom') setRange(v, '');
  else field($<HTMLFormElement>('#timerange'), 'from').focus();
});
$('#zoom-out').addEventListener('click', () => {
  const r = zoomOut(state.since, state.until);
  setRange(r.since, r.until);
});
$<HTMLFormElement>('#exec-filters').addEventListener('submit', (ev) => {
  ev.preventDefault();
  state.xq = {};
  for (const [k, v] of new FormData(ev.target as HTMLFormElement)) if (String(v).trim()) state.xq[k as ExecKey] = String(v).trim();
  state.execOffset = 0;
  schedule('executions', loadExecutions);
});
$('#exec-prev').addEventListener('click', () => {
  state.execOffset = Math.max(0, state.execOffset - execPage);
  schedule('executions', loadExecutions);
});
$('#exec-next').addEventListener('click', () => {
  state.execOffset += execPage;
  schedule('executions', loadExecutions);
});
$<HTMLFormElement>('#timeline-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const name = field(ev.target as HTMLFormElement, 'instance').value.trim();
  if (name) openTimeline(name);
});
zoomOnDrag();
$('#prev').addEventListener('click', () => {
  state.offset = Math.max(0, state.offset - state.limit);
  schedule('fleet', loadFleet);
});
$('#next').addEventListener('click', () => {
  state.offset += state.limit;
  schedule('fleet', loadFleet);
});
$<HTMLInputElement>('#page-jump').addEventListener('change', (ev) => {
  const n = Math.max(1, Math.floor(Number((ev.target as HTMLInputElement).value)) || 1);
  state.offset = (n - 1) * state.limit;
  schedule('fleet', loadFleet);
});
$<HTMLSelectElement>('#page-size').addEventListener('change', (ev) => {
  const size = Number((ev.target as HTMLSelectElement).value);
  // The first row on screen stays on the page.
  state.offset = Math.floor(state.offset / size) * size;
  state.limit = size;
  store.set('limit', String(size));
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
  state.instance = field(f, 'instance').value.trim();
  for (const k of incidentKeys) state.iq[k] = field<HTMLSelectElement>(f, k).value;
  schedule('incidents', loadIncidents);
});
$<HTMLSelectElement>('#tz').addEventListener('change', (ev) => {
  const tz = (ev.target as HTMLSelectElement).value as TimeZoneChoice;
  setTimeZone(tz);
  store.set('tz', tz);
  reloadAll();
});
// The operator's forms are in the page only when a write token is configured.
const silenceForm = document.querySelector<HTMLFormElement>('#silence-form');
silenceForm?.addEventListener('submit', (ev) => {
  ev.preventDefault();
  addSilence(ev.target as HTMLFormElement).catch((e) => ($('#action-result').textContent = `✖ ${message(e)}`));
});
silenceForm?.addEventListener('input', previewSoon);
document.addEventListener('keydown', (ev) => {
  if (ev.key === '/' && !/INPUT|SELECT|TEXTAREA/.test(document.activeElement?.tagName ?? '')) {
    ev.preventDefault();
    $('#filters [name=filter]').focus();
  }
});

// ---- Zoom: a drag across the timeline plot narrows the range to the stretch dragged over ----

/** Where the plot's bars span in its viewBox (plots.ts draws them from x 30 to 590 of 600). */
const plotX0 = 30;
const plotX1 = 590;
function zoomOnDrag(): void {
  let start: number | undefined;
  const xOf = (svg: SVGSVGElement, clientX: number) => {
    const box = svg.getBoundingClientRect();
    return ((clientX - box.left) / box.width) * 600;
  };
  document.addEventListener('pointerdown', (ev) => {
    const svg = (ev.target as Element).closest?.<SVGSVGElement>('#zoom-plot');
    if (!svg || ev.button !== 0) return;
    ev.preventDefault();
    start = xOf(svg, ev.clientX);
  });
  document.addEventListener('pointermove', (ev) => {
    const svg = document.querySelector<SVGSVGElement>('#zoom-plot');
    if (start === undefined || !svg) return;
    const x = xOf(svg, ev.clientX);
    const sel = svg.querySelector('#zoom-select');
    sel?.setAttribute('x', String(Math.min(start, x)));
    sel?.setAttribute('width', String(Math.abs(x - start)));
  });
  document.addEventListener('pointerup', (ev) => {
    const svg = document.querySelector<SVGSVGElement>('#zoom-plot');
    const from = start;
    start = undefined;
    if (from === undefined || !svg) return;
    svg.querySelector('#zoom-select')?.setAttribute('width', '0');
    const x = xOf(svg, ev.clientX);
    // A click is not a zoom: a few units of the 600 wide plot at least.
    if (Math.abs(x - from) < 6) return;
    const r = zoomTo(Date.parse(svg.dataset.from!), Date.parse(svg.dataset.to!), from, x, plotX0, plotX1);
    setRange(r.since, r.until);
  });
}

/** Opens (or closes) the audit trail of a correlation id just after the button that asked for it. */
async function showTrailOf(id: string, button: HTMLElement): Promise<void> {
  const box = button.nextElementSibling as HTMLElement | null;
  if (!box?.classList.contains('trail-of')) return;
  const open = button.getAttribute('aria-expanded') === 'true';
  button.setAttribute('aria-expanded', String(!open));
  box.hidden = open;
  if (open) return;
  box.textContent = 'reading…';
  try {
    const d = await get<{ records: TrailRecord[] }>(`/trail?${new URLSearchParams({ id, since: '30d' })}`);
    patch(box, trailView(d.records));
  } catch (e) {
    box.textContent = `could not read the trail (${message(e)})`;
  }
}

// ---- Live ----

function live(text: string): void {
  $('#live').textContent = text;
}
const pauseButton = $<HTMLButtonElement>('#pause-live');
function showPause(): void {
  pauseButton.setAttribute('aria-pressed', String(state.paused));
  pauseButton.textContent = state.paused ? `Resume live updates${state.missed ? ` (${state.missed} waiting)` : ''}` : 'Pause live updates';
  showLive();
}
/** The live indicator: live only while Reflex and Redis both answer. */
function showLive(): void {
  if (!state.reachable) return;
  if (state.redisDown) live('⚠ Redis unreachable: not live, the data shown is from before');
  else live(state.paused ? '⏸ paused' : '● live');
}
pauseButton.addEventListener('click', () => {
  state.paused = !state.paused;
  if (!state.paused && state.missed) reloadAll();
  state.missed = 0;
  showPause();
});

const source = new EventSource(`${api}/events`);
source.addEventListener('hello', () => {
  markReachable();
  showPause();
});
source.addEventListener('change', (ev) => {
  const c = JSON.parse((ev as MessageEvent<string>).data) as { fleet: boolean; audit: boolean };
  if (state.paused) {
    state.missed++;
    showPause();
    return;
  }
  if (c.fleet) schedule('fleet', liveFleet);
  if (c.audit) {
    // A request, a decision and its settling are each audited: everyone watching sees them.
    liveLoad('approvals', loadApprovals);
    liveLoad('incidents', loadIncidents);
    liveLoad('dlq', loadDlq);
    liveLoad('health', loadHealth);
    liveLoad('executions', loadExecutions);
  }
  // The timeline also shows its probes' last check, which moves with the fleet, not the audit.
  if (state.timeline) liveLoad('timeline', loadTimeline);
});

/**
 * A live update's load, at most once a second. A load the throttle put off may come due after
 * the operator paused: then it is counted as missed, not shown, so a paused page stays as it was.
 */
function liveLoad(name: string, load: () => Promise<void>): void {
  throttle(
    name,
    async () => {
      if (!state.paused) return load();
      state.missed++;
      showPause();
    },
    1000,
  );
}
source.onerror = () => markUnreachable('event stream closed');

restoreView();
reloadAll();
// Health says whether Redis and the daemon answer: read often enough that a failure shows within 5 s.
setInterval(() => schedule('health', loadHealth), 2_000);
// Relative times ("3 min ago") move on between reads.
setInterval(() => {
  for (const el of document.querySelectorAll<HTMLElement>('.rel[data-rel]')) el.textContent = `(${relative(el.dataset.rel!)})`;
}, 15_000);
