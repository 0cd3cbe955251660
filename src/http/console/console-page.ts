import { consoleScript } from './console-script.js';
import { consoleStyles } from './console-styles.js';

/** What the console's page shell needs; the data comes from its API, read by the script. */
export interface ConsolePageView {
  /** The console's API path (`/dashboard/console`). */
  api: string;
  /** A write token or an operator is configured: the actions are offered (each still needs a token typed in). */
  writable: boolean;
  /** `users`: each operator types a token of their own; `token`: the shared write token and a name. */
  identity: 'users' | 'token';
  queuesPath: string;
  auditPath: string;
  targets: string[];
  /** The user signed in with a session: named, with a sign-out, and the actions need no token. */
  signedIn?: { name: string; role: string };
  /** Where the sign-out posts. */
  logoutPath?: string;
}

const esc = (s: unknown): string =>
  String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const identityForm = (identity: 'users' | 'token') =>
  identity === 'users'
    ? `<p class="muted">Actions need your own token (an operator's): each is audited under your name. It stays in this page only (never stored) and is sent as Authorization: Bearer to this server.</p>
<form id="identity" autocomplete="off" onsubmit="return false"><label>your token <input type="password" id="write-token" autocomplete="off"></label></form>`
    : `<p class="muted">Actions need the write token. It stays in this page only (never stored) and is sent as Authorization: Bearer to this server.</p>
<form id="identity" autocomplete="off" onsubmit="return false"><label>write token <input type="password" id="write-token" autocomplete="off"></label> <label>your name <input id="actor" autocomplete="off" placeholder="console"></label></form>`;

const signedInBox = (v: ConsolePageView) =>
  `<p id="signed-in">Signed in as <b>${esc(v.signedIn!.name)}</b> (${esc(v.signedIn!.role)}): actions are audited under your name.</p>
<form method="post" action="${esc(v.logoutPath)}"><button type="submit" id="sign-out">Sign out</button></form>`;

const operatorBox = (writable: boolean, identity: 'users' | 'token', v?: ConsolePageView) =>
  writable
    ? `<section id="operator" aria-labelledby="operator-h"><h2 id="operator-h">Operator</h2>
${v?.signedIn ? signedInBox(v) : identityForm(identity)}
<form id="silence-form" autocomplete="off"><h3>Add a silence</h3>
<label>instance <input name="instance"></label> <label>project <input name="project"></label> <label>member <input name="location"></label>
<label>duration <input name="duration" required placeholder="2h"></label> <label>reason <input name="reason" required aria-describedby="reason-help"></label>
<p id="reason-help" class="muted">A silence of more than one instance or longer than a day needs a reason of at least 3 words.</p>
<label><span><input type="checkbox" name="actions" checked> mutes actions</span></label> <label><span><input type="checkbox" name="notifications" checked> mutes notifications</span></label>
<button type="submit">Add silence</button><output id="silence-preview" aria-live="polite"></output></form>
<output id="action-result" role="status" aria-live="polite"></output></section>`
    : `<section id="operator"><h2>Operator</h2>${v?.signedIn ? signedInBox(v) : ''}<p class="muted">Read-only console: ${
        identity === 'users' ? 'nobody in the users file may act (no operator or admin) and no write token acts' : 'no write token is configured'
      }. Use the CLI (<code>reflex heal</code>, <code>reflex silence add</code>, <code>reflex quarantine release</code>, <code>reflex dlq retry</code>, <code>reflex incident</code>).</p></section>`;

const panelState = (id: string) => `<p class="panel-state" id="${id}-state" role="status" aria-live="polite" hidden></p>`;

/**
 * The console's page: a shell (header, sections, forms, the confirmation dialog) and one inline
 * script that reads the API, draws the fleet, incidents, plots and health, and listens to the
 * change stream. Problems come first: health and incidents sit beside the fleet on a desktop and
 * above it on a phone.
 */
export function renderConsole(v: ConsolePageView): string {
  const config = JSON.stringify({ api: v.api, writable: v.writable, identity: v.identity, signedIn: v.signedIn }).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>Reflex console</title><link rel="icon" href="data:,"><style>${consoleStyles}</style></head>
<body>
<a class="skip" href="#fleet">Skip to the fleet</a>
<header><h1>Reflex console</h1><span>Target${v.targets.length > 1 ? 's' : ''} <code>${esc(v.targets.join(', '))}</code></span>
<nav aria-label="Sections"><a href="#fleet">Fleet</a><a href="#approvals">Approvals</a><a href="#incidents">Incidents</a><a href="#executions">Executions</a><a href="#timeline">Timeline</a><a href="#plots">Plots</a><a href="#health">Health</a><a href="${esc(v.queuesPath)}">Queues</a><a href="${esc(v.auditPath)}">Audit table</a></nav>
<span id="live" role="status" aria-live="polite">connecting…</span>
<button type="button" id="pause-live" aria-pressed="false">Pause live updates</button>
<label class="inline">times in <select id="tz"><option value="utc">UTC</option><option value="local">my time zone</option></select></label></header>
<main>
<form class="filters" id="timerange" aria-label="Time range of incidents, executions, timeline and plots">
<label>time range <select name="since"><option value="15m">last 15 min</option><option value="1h">last hour</option><option value="6h">last 6 h</option><option value="24h" selected>last 24 h</option><option value="7d">last 7 days</option><option value="30d">last 30 days</option><option value="custom">custom…</option></select></label>
<label>from <input name="from" placeholder="2026-11-25 18:00, or 3h" aria-describedby="range-help"></label>
<label>until <input name="until" placeholder="now" aria-describedby="range-help"></label>
<button type="submit">Apply</button> <button type="button" id="zoom-out">Zoom out</button>
<span id="range-text" role="status"></span>
<p id="range-help" class="muted">From and until: a time (<code>2026-11-25 18:00</code>, in the zone chosen above) or a distance back from now (<code>90m</code>, <code>2d</code>). Drag across the timeline plot to zoom into a stretch of it.</p></form>
<section id="fleet" aria-labelledby="fleet-h"><h2 id="fleet-h">Fleet</h2>${panelState('fleet')}
<ul class="counts" id="counts" aria-label="Counts (each one filters the fleet)"></ul>
<form class="filters" id="filters" role="search">
<label>target <select name="target"><option value="">all</option></select></label>
<label>project <select name="project"><option value="">all</option></select></label>
<label>member <select name="member"><option value="">all</option></select></label>
<label>status <select name="status"><option value="">all</option><option value="down">down (not Running)</option><option>Running</option><option>Stopped</option><option>Error</option><option>Frozen</option></select></label>
<label>search or filter <input class="wide" name="filter" placeholder="web-1, or restarts gt 0 and name eq web-.*" aria-describedby="filter-help"></label>
<button type="submit">Apply</button></form>
<p id="filter-help" class="muted">A bare word finds instances whose name contains it (<code>inst-00042</code>). Or the filter language as in rules: <code>field eq|ne value</code> (an anchored pattern), <code>field gt|ge|lt|le number</code>, <code>and</code>, <code>or</code>, <code>not</code>; fields name, project, location, status, opt_in, quarantined, backoff, silenced, acting, restarts.</p>
<button type="button" id="changes-bar" class="changes" hidden></button>
<div id="fleet-table"></div>
<div class="pager"><button type="button" id="prev">← previous</button><span id="page-info" role="status"></span><button type="button" id="next">next →</button>
<label class="inline">page <input id="page-jump" type="number" min="1" value="1" inputmode="numeric"></label><span id="page-count"></span>
<label class="inline">rows per page <select id="page-size"><option>25</option><option selected>50</option><option>100</option><option>200</option><option>500</option></select></label></div>
</section>
<div id="side">
<section id="health" aria-labelledby="health-h"><h2 id="health-h">Health</h2>${panelState('health')}<ul class="health" id="health-list"><li>reading…</li></ul></section>
<section id="approvals" aria-labelledby="approvals-h"><h2 id="approvals-h">Approvals</h2>${panelState('approvals')}
<p class="muted">Actions a rule's <code>approval</code> holds: the first decision wins, audited as you; approved, re-checked when run.</p>
<div id="approvals-body"></div></section>
<section id="incidents" aria-labelledby="incidents-h"><h2 id="incidents-h">Incidents</h2>${panelState('incidents')}
<form class="filters" id="range"><label>instance <input name="instance" placeholder="all instances"></label>
<label>kind <select name="kind"><option value="">all</option><option value="crash-loop">crash loop</option><option value="crash">crash</option><option value="error">Error</option><option value="failed-start">failed start</option><option value="unknown-stop">unknown stop</option><option value="failed-operation">failed operation</option></select></label>
<label>outcome <select name="outcome"><option value="">all</option><option value="healed">healed</option><option value="failed">not healed (ended)</option><option value="open">open</option></select></label>
<label>rule <select name="rule"><option value="">all</option></select></label>
<button type="submit">Show</button></form>
<ol class="incidents" id="incident-list"></ol></section>
<section id="alerts" aria-labelledby="alerts-h"><h2 id="alerts-h">Alerts and silences</h2>${panelState('alerts')}<div id="alerts-body"></div></section>
<section id="dlq" aria-labelledby="dlq-h"><h2 id="dlq-h">Dead letters</h2>${panelState('dlq')}<div id="dlq-body"></div></section>
${operatorBox(v.writable, v.identity, v)}
</div>
<section id="executions" aria-labelledby="executions-h"><h2 id="executions-h">Executions</h2>${panelState('executions')}
<p class="muted">Every action Reflex ran in the range: by a rule, a schedule (housekeeping) or an operator, from the audit log.</p>
<form class="filters" id="exec-filters"><label>started by <select name="source"><option value="">anyone</option><option value="rule">a rule</option><option value="schedule">a schedule</option><option value="operator">an operator</option></select></label>
<label>action <select name="action"><option value="">all</option></select></label>
<label>result <select name="result"><option value="">all</option><option value="done">done</option><option value="failed">failed or gave up</option><option value="skipped">skipped</option><option value="running">running</option><option value="queued">queued</option><option value="dry-run">dry-run</option></select></label>
<label>instance <input name="instance" placeholder="all"></label><label>rule, schedule or user <input name="by" placeholder="all"></label>
<button type="submit">Show</button></form>
<div id="exec-table"></div>
<div class="pager"><button type="button" id="exec-prev">← newer</button><span id="exec-info" role="status"></span><button type="button" id="exec-next">older →</button></div></section>
<section id="timeline" aria-labelledby="timeline-h"><h2 id="timeline-h">State timeline</h2>${panelState('timeline')}
<form class="filters" id="timeline-form"><label>instance <input name="instance" placeholder="a name, or ◷ in the fleet" required></label><button type="submit">Show</button></form>
<div id="timeline-body"><p class="muted">Pick an instance: ◷ beside its name in the fleet, or State timeline on an incident.</p></div></section>
<section id="plots" aria-labelledby="plots-h"><h2 id="plots-h">Plots</h2>${panelState('plots')}<div class="plots" id="plot-area"></div></section>
</main>
<dialog id="confirm" aria-labelledby="confirm-title" aria-describedby="confirm-text"><form method="dialog">
<h2 id="confirm-title"></h2><p id="confirm-text"></p><div id="confirm-extra"></div>
<div class="dialog-buttons"><button value="cancel" id="confirm-cancel" autofocus>Cancel</button> <button value="ok" id="confirm-ok" class="danger"></button></div>
</form></dialog>
<script>window.REFLEX_CONSOLE=${config};${consoleScript}</script>
</body></html>`;
}
