import { consoleScript } from './console-script.js';
import { consoleStyles } from './console-styles.js';

/** What the console's page shell needs; the data comes from its API, read by the script. */
export interface ConsolePageView {
  /** The console's API path (`/dashboard/console`). */
  api: string;
  /** A write token is configured: the actions are offered (each still needs the token typed in). */
  writable: boolean;
  queuesPath: string;
  auditPath: string;
  targets: string[];
}

const esc = (s: unknown): string =>
  String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const operatorBox = (writable: boolean) =>
  writable
    ? `<section id="operator" aria-labelledby="operator-h"><h2 id="operator-h">Operator</h2>
<p class="muted">Actions need the write token. It stays in this page only (never stored) and is sent as Authorization: Bearer to this server.</p>
<form id="identity" autocomplete="off" onsubmit="return false"><label>write token <input type="password" id="write-token" autocomplete="off"></label> <label>your name <input id="actor" autocomplete="off" placeholder="console"></label></form>
<form id="silence-form" autocomplete="off"><h3>Add a silence</h3>
<label>instance <input name="instance"></label> <label>project <input name="project"></label> <label>member <input name="location"></label>
<label>duration <input name="duration" required placeholder="2h"></label> <label>reason <input name="reason" required></label>
<label><span><input type="checkbox" name="actions" checked> mutes actions</span></label> <label><span><input type="checkbox" name="notifications" checked> mutes notifications</span></label>
<button type="submit">Add silence</button></form>
<output id="action-result" role="status" aria-live="polite"></output></section>`
    : '<section id="operator"><h2>Operator</h2><p class="muted">Read-only console: no write token is configured. Use the CLI (<code>reflex heal</code>, <code>reflex silence add</code>, <code>reflex quarantine release</code>, <code>reflex dlq retry</code>).</p></section>';

/**
 * The console's page: a shell (header, sections, forms) and one inline script that reads the API,
 * draws the fleet, incidents, plots and health, and listens to the change stream.
 */
export function renderConsole(v: ConsolePageView): string {
  const config = JSON.stringify({ api: v.api, writable: v.writable }).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>Reflex console</title><link rel="icon" href="data:,"><style>${consoleStyles}</style></head>
<body>
<a class="skip" href="#fleet">Skip to the fleet</a>
<header><h1>Reflex console</h1><span>Target${v.targets.length > 1 ? 's' : ''} <code>${esc(v.targets.join(', '))}</code></span>
<nav aria-label="Sections"><a href="#fleet">Fleet</a><a href="#incidents">Incidents</a><a href="#plots">Plots</a><a href="#health">Health</a><a href="${esc(v.queuesPath)}">Queues</a><a href="${esc(v.auditPath)}">Audit table</a></nav>
<span id="live" role="status" aria-live="polite">connecting…</span></header>
<main>
<section id="fleet" aria-labelledby="fleet-h"><h2 id="fleet-h">Fleet</h2>
<ul class="counts" id="counts" aria-label="Counts (each one filters the fleet)"></ul>
<form class="filters" id="filters" role="search">
<label>target <select name="target"><option value="">all</option></select></label>
<label>project <select name="project"><option value="">all</option></select></label>
<label>member <select name="member"><option value="">all</option></select></label>
<label>status <select name="status"><option value="">all</option><option value="down">down (not Running)</option><option>Running</option><option>Stopped</option><option>Error</option><option>Frozen</option></select></label>
<label>filter <input class="wide" name="filter" placeholder="name eq web-.* and opt_in eq true" aria-describedby="filter-help"></label>
<button type="submit">Apply</button></form>
<p id="filter-help" class="muted">Filter language as in rules: <code>field eq|ne value</code>, <code>and</code>, <code>or</code>, <code>not</code>; fields name, project, location, status, opt_in, quarantined, backoff, silenced, acting, restarts.</p>
<div id="fleet-table"></div>
<div class="pager"><button type="button" id="prev">← previous</button><span id="page-info" role="status"></span><button type="button" id="next">next →</button></div>
</section>
<div id="side">
<section id="health" aria-labelledby="health-h"><h2 id="health-h">Health</h2><ul class="health" id="health-list"><li>reading…</li></ul></section>
${operatorBox(v.writable)}
<section id="alerts" aria-labelledby="alerts-h"><h2 id="alerts-h">Alerts and silences</h2><div id="alerts-body"></div></section>
<section id="dlq" aria-labelledby="dlq-h"><h2 id="dlq-h">Dead letters</h2><div id="dlq-body"></div></section>
</div>
<section id="incidents" aria-labelledby="incidents-h"><h2 id="incidents-h">Incidents</h2>
<form class="filters" id="range"><label>range <select name="since"><option value="1h">last hour</option><option value="24h" selected>last 24 h</option><option value="7d">last 7 days</option></select></label>
<label>instance <input name="instance" placeholder="all instances"></label><button type="submit">Show</button></form>
<ol class="incidents" id="incident-list"></ol></section>
<section id="plots" aria-labelledby="plots-h"><h2 id="plots-h">Plots</h2><div class="plots" id="plot-area"></div></section>
</main>
<script>window.REFLEX_CONSOLE=${config};${consoleScript}</script>
</body></html>`;
}
