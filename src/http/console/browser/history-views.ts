import type { Execution, ExecutionsAnswer, FiringAlert, InstanceTimeline, ProbeState } from './console-wire.js';
import { absolute, esc, when } from './markup.js';
import { alertKinds, currentKind, type AlertKindEntry } from '../../../alerts/catalogue.js';

/** The markup of what happened over the range: executions, an instance's state timeline, and why an alert fires. Pure functions, no DOM. */

/** `350 ms`, `2.4 s`, `3 min 5 s`, `1 h 20 min`. */
export function durationText(ms: number | undefined): string {
  if (ms === undefined) return '…';
  if (ms < 1_000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1_000)} s`;
  return `${Math.floor(ms / 3_600_000)} h ${Math.round((ms % 3_600_000) / 60_000)} min`;
}

const sourceText: Record<Execution['source'], string> = { rule: '↻ rule', schedule: '⚙ schedule', operator: '☺ operator' };
const resultClass = (r: string) =>
  r === 'done' ? 'ok' : r === 'failed' || r === 'gave up' ? 'bad' : r === 'queued' || r === 'running' ? 'backoff' : '';

/** Who started an execution, in words. */
function startedBy(e: Execution): string {
  if (e.source === 'operator')
    return `${sourceText.operator} <b>${esc(e.actor ?? '?')}</b> <small>${esc(e.by)}${e.origin ? `, ${esc(e.origin)}` : ''}</small>`;
  return `${sourceText[e.source]} <b>${esc(e.by)}</b>`;
}

/** The executions' page as a table (cards on a phone); a Re-run button where it is safe and `writable`. */
export function executionsView(d: ExecutionsAnswer, writable: boolean): string {
  let html = d.truncated ? '<p class="muted">Only the newest 50 000 audit records of the range were read: older executions are missing.</p>' : '';
  if (!d.executions.length) return html + '<p class="muted">No execution matches in this range.</p>';
  const rows = d.executions.map((e) => {
    const rerun =
      writable && e.rerun && e.project
        ? `<button type="button" class="act" data-rerun="${esc(e.id)}" data-target="${esc(e.target)}" data-project="${esc(e.project)}" data-instance-name="${esc(e.instance)}" data-action="${esc(e.action)}" aria-label="Re-run ${esc(e.action)} on ${esc(e.instance)}">Re-run</button>`
        : '';
    const params = e.params.length ? e.params.map((p) => `<code>${esc(p)}</code>`).join('<br>') : '<span class="muted">—</span>';
    return (
      `<tr data-morph="${esc(e.id)}" data-execution="${esc(e.id)}" data-source="${e.source}" data-result="${esc(e.result)}">` +
      `<td data-label="started" class="at">${when(e.startedAt)}</td>` +
      `<td data-label="action"><b>${esc(e.action)}</b></td>` +
      `<td data-label="instance">${e.instance ? `<a href="#timeline" data-timeline="${esc(e.instance)}">${esc(e.instance)}</a>` : '<span class="muted">—</span>'}</td>` +
      `<td data-label="by">${startedBy(e)}</td>` +
      `<td data-label="parameters" class="params">${params}</td>` +
      `<td data-label="result"><span class="flag ${resultClass(e.result)}">${esc(e.result)}</span>${e.attempts > 1 ? ` <small>${e.attempts} attempts</small>` : ''}<div class="story">${esc(e.summary)}</div></td>` +
      `<td data-label="duration">${durationText(e.durationMs)}</td>` +
      (writable ? `<td data-label="re-run">${rerun}</td>` : '') +
      '</tr>'
    );
  });
  html +=
    '<table class="cards" aria-label="Executions"><thead><tr><th>started</th><th>action</th><th>instance</th><th>started by</th><th>parameters</th><th>result</th><th>duration</th>' +
    (writable ? '<th></th>' : '') +
    `</tr></thead><tbody>${rows.join('')}</tbody></table>`;
  return html;
}

/** Which executions the page shows. */
export function executionsInfo(d: ExecutionsAnswer): string {
  return d.matched
    ? `executions ${d.offset + 1}–${d.offset + d.executions.length} of ${d.matched} matching (${d.total} in the range)`
    : `0 matching (${d.total} in the range)`;
}

const spanClass: Record<string, string> = { Running: 'run', Stopped: 'stop', Error: 'err', Frozen: 'frz' };
const markGlyph: Record<InstanceTimeline['marks'][number]['kind'], string> = {
  incident: '⚠',
  reflex: '↻',
  operator: '☺',
  housekeeping: '⚙',
  health: '♥',
};

/** A mark's text; a probe's transition with the last check's output and duration. */
function markText(m: InstanceTimeline['marks'][number]): string {
  if (m.kind !== 'health') return esc(m.text);
  const output = m.output ? ` <code class="probe-output">${esc(m.output.slice(-300))}</code>` : '';
  return `<span class="flag ${m.health === 'unhealthy' ? 'bad' : 'ok'}">${esc(m.text)}</span> <small>(last check ${durationText(m.durationMs)})</small>${output}`;
}

/** Its probes' state now: health, the streak, the last check and its output. */
function probesView(probes: ProbeState[]): string {
  if (!probes.length) return '<p class="muted">No health probe covers it (or none has checked it yet).</p>';
  const rows = probes.map((p) => {
    const streak = p.failures
      ? `${p.failures} failure${p.failures === 1 ? '' : 's'} in a row`
      : `${p.successes} success${p.successes === 1 ? '' : 'es'} in a row`;
    return (
      `<tr data-probe="${esc(p.probe)}" data-health="${p.health}"><td data-label="probe"><b>${esc(p.probe)}</b>${probes.some((q) => q.project !== p.project || q.target !== p.target) ? ` <small>${esc(p.project)}</small>` : ''}</td>` +
      `<td data-label="health"><span class="flag ${p.health === 'unhealthy' ? 'bad' : p.health === 'healthy' ? 'ok' : 'backoff'}">${esc(p.health)}</span>${p.changedAt ? ` <small>since</small> ${when(p.changedAt)}` : ''}</td>` +
      `<td data-label="streak">${streak}</td>` +
      `<td data-label="last check" class="at">${when(p.lastAt)}${p.lastOutcome ? ` <small>${esc(p.lastOutcome)}</small>` : ''}</td>` +
      `<td data-label="output">${p.lastOutput ? `<code class="probe-output">${esc(p.lastOutput.slice(-300))}</code>` : '<span class="muted">—</span>'}</td></tr>`
    );
  });
  return `<table class="cards probes" aria-label="Health probes"><thead><tr><th>probe</th><th>health</th><th>streak</th><th>last check</th><th>output</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

/** An instance's status over the range as a band (one colour and label per status) with the marks of what was done, then the marks as a list. */
export function timelineView(t: InstanceTimeline): string {
  const w = 600;
  const from = Date.parse(t.from);
  const to = Date.parse(t.to);
  const x = (iso: string | undefined, fallback: number) => {
    const ms = iso ? Math.min(to, Math.max(from, Date.parse(iso))) : fallback;
    return 10 + ((ms - from) / Math.max(1, to - from)) * (w - 20);
  };
  const bands = t.spans.map((s) => {
    const x1 = x(s.from, from);
    const x2 = x(s.to, to);
    const label = `${s.status} from ${absolute(s.from)}${s.to ? ` to ${absolute(s.to)}` : ' (now)'}${s.intent ? ` (${s.intent})` : ''}`;
    return (
      `<g data-status="${esc(s.status)}"><title>${esc(label)}</title><rect class="span-${spanClass[s.status] ?? 'other'}" x="${x1.toFixed(1)}" y="14" width="${Math.max(1, x2 - x1).toFixed(1)}" height="26"></rect>` +
      (x2 - x1 > 50 ? `<text x="${(x1 + 3).toFixed(1)}" y="31">${esc(s.status)}</text>` : '') +
      '</g>'
    );
  });
  const marks = t.marks.map((m) => {
    const mx = x(m.at, from);
    return `<g class="mark mark-${m.kind}"><title>${esc(`${absolute(m.at)} ${m.text}`)}</title><line x1="${mx.toFixed(1)}" y1="8" x2="${mx.toFixed(1)}" y2="46"></line><text x="${mx.toFixed(1)}" y="58" text-anchor="middle">${markGlyph[m.kind]}</text></g>`;
  });
  const label = `State timeline of ${t.instance}: ${t.spans.map((s) => s.status).join(', ') || 'no status change seen'}; ${t.marks.length} action(s) and incident(s)`;
  const svg =
    `<svg role="img" aria-label="${esc(label)}" viewBox="0 0 ${w} 84">${bands.join('')}${marks.join('')}` +
    `<text x="10" y="78">${esc(absolute(t.from))}</text><text x="${w - 10}" y="78" text-anchor="end">${esc(absolute(t.to))}</text></svg>`;
  const legend =
    '<p class="muted legend"><span class="key span-run"></span>Running <span class="key span-stop"></span>Stopped <span class="key span-err"></span>Error <span class="key span-frz"></span>Frozen · ⚠ incident · ↻ Reflex (a rule) · ☺ an operator · ⚙ housekeeping · ♥ a health probe\'s transition</p>';
  const list = t.marks.length
    ? `<ol class="marks">${t.marks
        .map(
          (m) =>
            `<li data-mark="${m.kind}"${m.health ? ` data-health="${m.health}"` : ''}>${markGlyph[m.kind]} <span class="at">${when(m.at)}</span> ${markText(m)} ${trailOf(m.correlationId, 'trail', `Audit trail of ${m.text} at ${m.at}`)}</li>`,
        )
        .join('')}</ol>`
    : '<p class="muted">Nothing done to it and no probe transition in this range.</p>';
  const spans = t.spans.length ? '' : '<p class="muted">No status event of this instance in this range or the day before it.</p>';
  return `<figure class="state-timeline">${svg}</figure>${legend}${spans}<h3>Health probes</h3>${probesView(t.probes ?? [])}<h3>What happened</h3>${list}`;
}

/** A button that opens a correlation id's audit trail in the box after it (kept open across live updates). */
const trailOf = (id: string, text: string, label: string) =>
  `<button type="button" class="link" aria-expanded="false" data-keep data-trail-of="${esc(id)}" aria-label="${esc(label)}">${esc(text)}</button><div class="trail trail-of" data-keep hidden></div>`;

/** One firing alert, with why it fires: its kind, the incident, what Reflex did, and what resolves it. */
export function firingAlertView(a: FiringAlert): string {
  const did = a.actions.length
    ? `<ul class="did">${a.actions.map((x) => `<li>${esc(x.action)}: ${esc(x.result)}${x.summary ? ` — ${esc(x.summary)}` : ''}</li>`).join('')}</ul>`
    : '';
  return (
    `<li data-morph="${esc(`${a.kind}|${a.instance}|${a.correlationId}`)}" data-alert-kind="${esc(a.kind)}" data-instance="${esc(a.instance)}">⚠ <b>${esc(a.severity)}</b> <b>${esc(a.kind)}</b> ${esc(a.project)}/${esc(a.instance)}: ${esc(a.summary)} <small>since ${when(a.startsAt)}</small>` +
    `<details class="why" data-keep><summary>Why is it firing?</summary><p>Raised by incident <code>${esc(a.correlationId)}</code>${a.outcome ? `, outcome: ${esc(a.outcome)}` : ''}. It resolves when ${esc(resolvedBy(a.kind))}.</p>${did}` +
    `${trailOf(a.correlationId, 'Show its audit trail', `Audit trail of the ${a.kind} alert of ${a.instance}`)}</details></li>`
  );
}

/** What resolves an alert of the kind, from the alert catalogue (a former spelling read as its kind). */
function resolvedBy(kind: string): string {
  return (alertKinds as Record<string, AlertKindEntry>)[currentKind(kind)]?.resolvedBy ?? 'its condition ends';
}
