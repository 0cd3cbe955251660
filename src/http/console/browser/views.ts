import type { ApprovalView, DeadLetters, FleetPage, FleetRow, Health, Incident, IncidentsAnswer, TrailRecord, Triage } from './console-wire.js';
import { firingAlertView } from './history-views.js';
import { esc, mark, when } from './markup.js';

/** The markup of each part of the page, from the API's answers: pure functions, no DOM. */

const icons: Record<string, string> = { Running: '▶', Stopped: '■', Error: '✖', Frozen: '❄', Starting: '◔', Stopping: '◔' };
const kinds: Record<string, string> = {
  crash: '⚠ crash',
  error: '✖ Error',
  'failed-operation': '✖ failed operation',
  'unknown-stop': '? unknown stop',
  'failed-start': '✖ failed start',
};
/** Each count's key in `FleetPage.counts` and its label; every count but the total is a flag that filters the fleet. */
const countLabels = [
  ['total', 'instances'],
  ['down', 'down'],
  ['error', 'in Error'],
  ['quarantined', 'quarantined'],
  ['backoff', 'in back-off'],
  ['silenced', 'silenced'],
  ['acting', 'being acted on'],
  ['unhealthy', 'unhealthy'],
] as const;

/** The counts, as buttons; the one of the current `flag` is pressed. */
export function countsView(d: FleetPage, flag: string): string {
  return countLabels
    .map(([k, label]) => {
      const f = k === 'total' ? '' : k;
      return `<li><button type="button" data-flag="${f}" aria-pressed="${flag === f}"><b>${d.counts[k] || 0}</b>${label}</button></li>`;
    })
    .join('');
}

/** A select's options: "all", then `values`; `current` stays selected. */
export function optionsView(values: string[], current: string): string {
  return '<option value="">all</option>' + values.map((v) => `<option${v === current ? ' selected' : ''}>${esc(v)}</option>`).join('');
}

function flagsOf(r: FleetRow): string {
  const f: string[] = [];
  if (r.quarantined) f.push(`<span class="flag quarantined">⊘ quarantined${r.quarantined.until ? ` until ${when(r.quarantined.until)}` : ''}</span>`);
  if (r.backoffUntil) f.push(`<span class="flag backoff">↻ back-off until ${when(r.backoffUntil)}</span>`);
  if (r.acting) f.push('<span class="flag acting">⚙ being acted on</span>');
  if (r.silenced) f.push(`<span class="flag silenced" title="${esc(r.silenced.reason)}">◌ silenced until ${when(r.silenced.until)}</span>`);
  return f.join('') || '<span class="muted">—</span>';
}

function actionsOf(r: FleetRow): string {
  const k = esc(r.key);
  const n = esc(r.name);
  const out: string[] = [];
  if (r.statusCode !== 103)
    out.push(`<button type="button" class="act" data-morph="heal" data-act="heal" data-key="${k}" aria-label="Heal ${n}">Heal</button>`);
  if (r.quarantined)
    out.push(
      `<button type="button" class="act" data-morph="release" data-act="release" data-key="${k}" aria-label="Release ${n} from quarantine">Release</button>`,
    );
  out.push(`<button type="button" class="act" data-morph="silence" data-act="silence" data-key="${k}" aria-label="Silence ${n}">Silence</button>`);
  return out.join(' ');
}

function statusOf(r: FleetRow, lostSince?: number): string {
  // The daemon's event stream is lost: the status is the last one Reflex saw, of that age.
  if (lostSince !== undefined)
    return `<span class="st st-${esc(r.status)} last-known">${icons[r.status] || '•'} ${esc(r.status)}?</span> <small class="last-known">(last known; the daemon's events lost since ${when(lostSince)})</small>`;
  const why =
    r.statusFrom === 'list'
      ? ' <small>(daemon list; not seen by Reflex yet)</small>'
      : r.intent && r.statusCode !== 103
        ? ` <small>(${esc(r.intent)})</small>`
        : '';
  return `<span class="st st-${esc(r.status)}">${icons[r.status] || '•'} ${esc(r.status)}</span>${why}`;
}

const healthText: Record<FleetRow['health'], string> = { healthy: '♥ healthy', unhealthy: '✖ unhealthy', unknown: '? unknown', none: '—' };

/** What its probes conclude, each probe's name and conclusion in the title. */
function healthOf(r: FleetRow): string {
  if (r.health === 'none') return '<span class="muted" title="no probe covers it">—</span>';
  const probes = (r.probes ?? []).map((p) => `${p.probe}: ${p.health}`).join(', ');
  const title = r.statusCode !== 103 ? `not probed while ${r.status}; ${probes}` : probes;
  return `<span class="probe-health probe-health-${r.health}" data-health="${r.health}" title="${esc(title)}">${healthText[r.health]}</span>`;
}

/**
 * The fleet's page as a table (cards on a narrow screen); the actions column only when `writable`.
 * `lostSince` answers, for a row whose target's event stream is lost, since when (epoch ms).
 */
export function fleetTableView(d: FleetPage, writable: boolean, lostSince: (r: FleetRow) => number | undefined = () => undefined): string {
  if (!d.rows.length) return '<p class="muted">No instance matches.</p>';
  const multi = d.targets.length > 1;
  const head =
    '<tr><th>instance</th><th>project</th>' +
    (multi ? '<th>target</th>' : '') +
    '<th>member</th><th>status</th><th>since</th><th>health</th><th>opt-in</th><th>state</th><th>restarts</th>' +
    (writable ? '<th>actions</th>' : '') +
    '</tr>';
  const rows = d.rows.map(
    (r) =>
      `<tr data-morph="${esc(r.key)}" data-key="${esc(r.key)}" data-status="${esc(r.status)}"${lostSince(r) !== undefined ? ' data-last-known="true"' : ''}>` +
      `<td data-label="instance"><a href="#incidents" data-instance="${esc(r.name)}">${esc(r.name)}</a> <a href="#timeline" class="tl" data-timeline="${esc(r.name)}" aria-label="State timeline of ${esc(r.name)}" title="State timeline">◷</a></td>` +
      `<td data-label="project">${esc(r.project)}</td>` +
      (multi ? `<td data-label="target" class="mono">${esc(r.target)}</td>` : '') +
      `<td data-label="member">${esc(r.location == null ? '?' : r.location)}</td>` +
      `<td data-label="status">${statusOf(r, lostSince(r))}</td>` +
      `<td data-label="since" class="at">${when(r.since)}</td>` +
      `<td data-label="health">${healthOf(r)}</td>` +
      `<td data-label="opt-in">${r.optIn == null ? '?' : r.optIn ? '✔ yes' : '✘ no'}</td>` +
      `<td data-label="state">${flagsOf(r)}</td><td data-label="restarts">${r.restarts}</td>` +
      (writable ? `<td data-label="actions">${actionsOf(r)}</td>` : '') +
      '</tr>',
  );
  return `<table class="cards" aria-label="Fleet"><thead>${head}</thead><tbody>${rows.join('')}</tbody></table>`;
}

/** Which rows of the match the page shows. */
export function pageInfoText(d: FleetPage): string {
  return d.matched
    ? `rows ${d.offset + 1}–${d.offset + d.rows.length} of ${d.matched} matching (${d.total} in the fleet)`
    : `0 matching (${d.total} in the fleet)`;
}

/** An incident's audit trail, as a table. */
export function trailView(records: TrailRecord[]): string {
  const rows = records.map(
    (r) =>
      `<tr data-type="${esc(r.type)}"><td data-label="at" class="at">${when(r.at)}</td><td data-label="type">${esc(r.type)}</td>` +
      `<td data-label="rule">${esc(r.rule)}</td><td data-label="result">${esc(r.result)}</td><td data-label="summary">${esc(r.summary)}</td></tr>`,
  );
  return `<table class="cards"><thead><tr><th>at</th><th>type</th><th>rule</th><th>result</th><th>summary</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

/** Who acknowledged an incident, who it is assigned to, and its notes. */
function triageView(t: Triage | undefined): string {
  if (!t) return '';
  const parts: string[] = [];
  if (t.acknowledged) parts.push(`<span class="flag">✔ acknowledged by ${esc(t.acknowledged.by)}</span> ${when(t.acknowledged.at)}`);
  if (t.assignee) parts.push(`<span class="assignee">assigned to <b>${esc(t.assignee.name)}</b></span> <small>by ${esc(t.assignee.by)}</small>`);
  const notes = t.notes.length
    ? `<ul class="notes">${t.notes.map((n) => `<li><b>${esc(n.by)}</b> ${when(n.at)}: ${esc(n.text)}</li>`).join('')}</ul>`
    : '';
  return `<div class="triage">${parts.length ? `<p>${parts.join(' · ')}</p>` : ''}${notes}</div>`;
}

/** An incident's triage buttons: Acknowledge (until it is), Assign, Add a note. */
function triageButtons(i: Incident, since: string): string {
  const data = `data-correlation="${esc(i.correlationId)}" data-since="${esc(since)}" data-instance-name="${esc(i.instance)}"`;
  const ack = i.triage?.acknowledged
    ? ''
    : `<button type="button" class="act" data-triage="ack" ${data} aria-label="Acknowledge the incident of ${esc(i.instance)}">Acknowledge</button> `;
  return (
    `<span class="triage-actions">${ack}` +
    `<button type="button" class="act" data-triage="assign" ${data} aria-label="Assign the incident of ${esc(i.instance)}">Assign…</button> ` +
    `<button type="button" class="act" data-triage="note" ${data} aria-label="Add a note to the incident of ${esc(i.instance)}">Add a note…</button></span> `
  );
}

/** The incidents of the range, newest first, each with its story, its triage and a button that opens its audit trail; triage buttons when `writable`. */
export function incidentsView(d: IncidentsAnswer, writable = false): string {
  let html = '';
  if (d.truncated) {
    html +=
      '<li class="muted">Only the newest 50 000 audit records of the range were read: older incidents and plot points are missing (reflex audit reads them all).</li>';
  }
  if (!d.incidents.length) return html + '<li class="muted">No incident in this range.</li>';
  for (const i of d.incidents) {
    const state =
      i.healMs != null
        ? '<span class="flag">✔ healed</span>'
        : i.outcome
          ? `<span class="flag bad">✘ ${esc(i.outcome.result)}</span>`
          : '<span class="flag backoff">… open</span>';
    const since = new Date(Date.parse(i.loop?.firstAt ?? i.at) - 60000).toISOString();
    const kind = i.loop
      ? `<span class="kind">⟳ crash loop: ${i.loop.count} incidents</span> <small>from</small> ${when(i.loop.firstAt)} <small>to</small> ${when(i.at)}`
      : `<span class="kind">${esc(kinds[i.kind] || i.kind)}</span> <span class="at">${when(i.at)}</span>`;
    const inside = i.loop
      ? `<details class="loop" data-keep><summary>${i.loop.count - 1} earlier in this loop</summary><ol>` +
        i.loop.incidents
          .map((x) => `<li data-correlation="${esc(x.correlationId)}"><span class="at">${when(x.at)}</span> ${esc(x.story)}</li>`)
          .join('') +
        '</ol></details>'
      : '';
    // Keyed by the episode's first incident: a loop's next crash updates its entry in place (an open
    // trail stays open), where keyed by its newest it was a new entry each time.
    const episode = (i.loop ? i.loop.incidents[i.loop.incidents.length - 1]?.correlationId : undefined) ?? i.correlationId;
    html +=
      `<li class="incident${i.loop ? ' crash-loop' : ''}" data-morph="${esc(episode)}" data-correlation="${esc(i.correlationId)}" data-since="${esc(since)}" data-instance="${esc(i.instance)}">` +
      `${kind} ${state}` +
      `<p class="story">${esc(i.story)}</p>${triageView(i.triage)}${inside}` +
      (writable ? triageButtons(i, since) : '') +
      `<a href="#timeline" class="tl-link" data-timeline="${esc(i.instance)}" aria-label="State timeline of ${esc(i.instance)}">State timeline</a> ` +
      `<button type="button" aria-expanded="false" data-keep data-trail="${esc(i.correlationId)}" data-since="${esc(since)}" ` +
      `aria-label="Audit trail of ${esc(i.instance)} at ${esc(i.at)}">Audit trail</button><div class="trail" data-keep hidden></div></li>`;
  }
  if (d.total > d.incidents.length) html += `<li class="muted">${d.total - d.incidents.length} older incident(s) not shown</li>`;
  return html;
}

/** Firing alerts, pending notification groups and active silences (each with an End button when `writable`). */
export function alertsView(d: IncidentsAnswer, writable: boolean): string {
  const a = d.alerts;
  const none = '<p class="muted">None.</p>';
  let html = '';
  if (!a) html = '<p class="muted">Notifications are not configured (or this replica runs no worker).</p>';
  else {
    const firing = a.firing.map(firingAlertView);
    const groups = a.groups.map((g) => `<li>${esc(g.receiver)}: ${g.alerts.length} alert(s), next flush ${when(g.nextFlushAt)}</li>`);
    html += `<h3>Firing alerts (${a.firing.length})</h3>` + (firing.length ? `<ul class="firing">${firing.join('')}</ul>` : none);
    html += `<h3>Pending notification groups (${a.groups.length})</h3>` + (groups.length ? `<ul>${groups.join('')}</ul>` : none);
  }
  const silences = d.silences.map((s) => {
    const scope = Object.entries(s.scope)
      .map((e) => `${e[0]}=${e[1]}`)
      .join(' ');
    const end = writable
      ? ` <button type="button" class="act" data-end-silence="${esc(s.id)}" data-scope="${esc(scope || 'everything')}" aria-label="End silence of ${esc(scope || 'everything')}">End</button>`
      : '';
    return (
      `<li data-morph="${esc(s.id)}" data-silence="${esc(s.id)}">◌ ${esc(scope || 'everything')} — ${esc(s.reason)} ` +
      `<small>by ${esc(s.createdBy)}${s.origin ? ` (${esc(s.origin)})` : ''}, until ${when(s.until)}</small>${end}</li>`
    );
  });
  html +=
    `<h3>Silences (${d.silences.length})</h3>` +
    (silences.length ? `<ul id="silence-list">${silences.join('')}</ul>` : '<p class="muted">No active silence.</p>');
  return html;
}

/**
 * Whether a check fails as the operator should read it now: /readyz keeps a subscriber whose event
 * stream is lost ready for a grace (a daemon restart reconnects within it), but no event is seen
 * meanwhile, so the console shows it failed at once.
 */
export const checkFails = (name: string, c: { ok: boolean; detail: string }, h: Health): boolean =>
  !c.ok ||
  (/^subscriber/.test(name) &&
    (/ lost /.test(c.detail) || h.streams.some((s) => !s.connected && (name === 'subscriber' || name === `subscriber:${s.target}`))));

/** The health panel's items: checks, event streams, lag, queues, dead letters. */
export function healthView(h: Health): string {
  const items = Object.entries(h.checks).map(([name, c]) => {
    const ok = !checkFails(name, c, h);
    return `<li class="${ok ? 'ok' : 'bad'}" data-check="${esc(name)}">${mark(ok)} ${esc(name)}: ${esc(c.detail)}</li>`;
  });
  for (const s of h.streams) {
    const state = `${s.connected ? 'connected' : 'not connected'}, ${s.leaseHolder ? 'lease holder' : 'standby'}${s.buffered ? `, ${s.buffered} frame(s) buffered` : ''}`;
    items.push(`<li class="${s.connected ? 'ok' : 'bad'}">${mark(s.connected)} stream ${esc(s.target)}: ${state}</li>`);
  }
  items.push(`<li>event lag: ${h.lag.meanMs == null ? 'no event yet' : `mean ${h.lag.meanMs} ms over ${h.lag.count} event(s)`}</li>`);
  for (const [q, states] of Object.entries(h.queues)) {
    items.push(
      `<li>queue ${esc(q)}: ${Object.entries(states)
        .map((e) => `${e[1]} ${e[0]}`)
        .join(', ')}</li>`,
    );
  }
  items.push(`<li class="${h.deadLetters ? 'bad' : 'ok'}">${h.deadLetters ? '✖ ' : '✔ '}${h.deadLetters} dead letter(s)</li>`);
  return items.join('');
}

/** The dead letters, each with a Retry button when `writable`. */
export function deadLettersView(d: DeadLetters, writable: boolean): string {
  if (!d.jobs.length) return '<p class="muted">None.</p>';
  const rows = d.jobs.map(
    (j) =>
      `<tr data-morph="${esc(j.id)}">` +
      (writable
        ? `<td><button type="button" class="act" data-retry="${esc(j.id)}" data-instance-name="${esc(j.instance)}" aria-label="Retry ${esc(`${j.rule}/${j.action}`)} on ${esc(j.instance)}">Retry</button></td>`
        : '') +
      `<td data-label="instance">${esc(j.instance)} <small>${esc(`${j.rule}/${j.action}`)}</small></td>` +
      `<td data-label="failed" class="at">${when(j.failedAt)}</td><td data-label="reason">${esc(j.reason)}</td><td data-label="job" class="mono">${esc(j.id)}</td>` +
      '</tr>',
  );
  return `<table class="cards"><thead><tr>${writable ? '<th></th>' : ''}<th>instance</th><th>failed</th><th>reason</th><th>job</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

const outcomeWords: Record<ApprovalView['status'], string> = {
  pending: 'waiting',
  approved: '✔ approved',
  denied: '✖ denied',
  expired: '⌛ timed out',
  withdrawn: '↶ withdrawn',
};

/**
 * The approvals panel: the requests waiting (instance, rule, actions, the role that decides, the
 * deadline and how long they have waited) with Approve and Deny when `mayDecide(role)`, then the
 * recently decided (outcome, by whom, when). `focus`: the approval a signed link opened, marked.
 */
export function approvalsView(list: ApprovalView[], mayDecide: (role: ApprovalView['role']) => boolean, focus = ''): string {
  const waiting = list.filter((a) => a.status === 'pending');
  const decided = list.filter((a) => a.status !== 'pending');
  const item = (a: ApprovalView) => {
    const name = esc(a.instance);
    const what = `${esc(a.actions.join(', '))} of <b>${name}</b> <small>(project ${esc(a.project)}${a.target ? ` on ${esc(a.target)}` : ''})</small>`;
    const head = `<p><span class="kind">${outcomeWords[a.status]}</span> ${what}, rule <code>${esc(a.rule)}</code></p>`;
    const data = `data-approval="${esc(a.id)}" data-instance-name="${name}" data-actions="${esc(a.actions.join(', '))}" data-role="${a.role}"`;
    const body =
      a.status === 'pending'
        ? `<p>needs ${a.role === 'admin' ? 'an admin' : 'an operator or an admin'}; asked ${when(a.requestedAt)}; times out ${when(a.expiresAt)}</p>` +
          (mayDecide(a.role)
            ? `<span class="approval-actions"><button type="button" class="act" data-decide="approved" ${data} aria-label="Approve ${esc(a.actions.join(', '))} of ${name}">Approve…</button> ` +
              `<button type="button" class="act danger" data-decide="denied" ${data} aria-label="Deny ${esc(a.actions.join(', '))} of ${name}">Deny…</button></span> `
            : `<p class="muted">You may not decide this one: it needs ${a.role === 'admin' ? 'an admin' : 'an operator'}.</p>`)
        : `<p class="decided">${a.decision?.actor ? `by <b>${esc(a.decision.actor)}</b>${a.decision.origin ? ` (${esc(a.decision.origin)})` : ''} ` : ''}${when(a.decision?.at ?? a.expiresAt)}${
            a.decision?.reason ? `: ${esc(a.decision.reason)}` : ''
          }</p>`;
    const trail = `<button type="button" aria-expanded="false" data-keep data-trail-of="${esc(a.correlationId)}" aria-label="Incident of ${name}: audit trail of approval ${esc(a.id)}">Incident trail</button><div class="trail trail-of" data-keep hidden></div>`;
    return `<li class="approval ${a.status}${a.id === focus ? ' focused' : ''}" id="approval-${esc(a.id)}" data-morph="${esc(a.id)}" data-approval-id="${esc(a.id)}" data-status="${a.status}" data-instance="${name}">${head}${body}${trail}</li>`;
  };
  const none = (text: string) => `<li class="muted">${text}</li>`;
  return (
    `<h3>Waiting (${waiting.length})</h3><ol class="approvals" id="approvals-waiting">${waiting.map(item).join('') || none('nothing waits for a decision')}</ol>` +
    `<h3>Recently decided</h3><ol class="approvals" id="approvals-decided">${decided.slice(0, 20).map(item).join('') || none('none in the last week')}</ol>`
  );
}
