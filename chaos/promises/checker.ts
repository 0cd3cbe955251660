import type { StoredAuditRecord } from '../../src/audit/audit-record.js';
import { StatusCode } from '../../src/client/status-code.js';
import type { CallRecord } from '../../src/simulator/context.js';
import { operatorAgent } from './operator.js';

/**
 * Reflex's promises, checked over one history after it settled: the daemon's own record of the
 * calls it received, what the world did (crashes, Error, heals, silences), the audit trail and the
 * instances as they ended. Pure: everything it reads is in the {@link Observation}.
 */
export const promises = {
  'operator-decision': "an operator's decision (stop, opt-out, silence) is never undone",
  identity: 'a remediation only for the instance (identity) that had the incident',
  'no-loss': 'no event lost: every lifecycle frame of the daemon has an audit record',
  once: 'no incident acted on twice',
  'unknown-cause': 'an incident left unhealed is alerted (unknown cause, quarantine, give-up)',
  'own-actions': "Reflex's own actions never trigger its rules (it makes no call no rule asks for)",
  'alerts-resolve': 'every alert that fires resolves or stays true',
  alive: 'no replica dies by itself',
} as const;
export type PromiseName = keyof typeof promises;

/** A crash or Error the world caused, or an operator's `reflex heal`, on one identity. */
export interface Incident {
  at: number;
  kind: 'crash' | 'error' | 'heal';
  name: string;
  uuid: string;
}

/** An operator's silence on an instance name, from `at` to `until`. */
export interface SilenceWindow {
  at: number;
  name: string;
  until: number;
}

/** A lifecycle frame an independent reader of the daemon's stream saw, with the id Reflex gives it. */
export interface WitnessedFrame {
  id: string;
  name: string;
  action: string;
  /** When the witness read it. */
  at: number;
}

export interface FinalInstance {
  name: string;
  uuid: string;
  status: number;
}

/** Everything the checker reads, about one history's instances only. */
export interface Observation {
  calls: CallRecord[];
  incidents: Incident[];
  silences: SilenceWindow[];
  audit: StoredAuditRecord[];
  frames: WitnessedFrame[];
  final: FinalInstance[];
  /**
   * How far apart two calls must be for their order to count. 0 on the simulator, which stamps each
   * call as it arrives; on a real daemon Reflex's calls are stamped when their audit record is
   * written, after the daemon took them, so an operator's call just before may have come after.
   */
  orderSlackMs?: number;
  /** Replicas that exited without being killed by the history. */
  died: string[];
  /**
   * When no replica wrote the stream (a SIGKILL until a takeover, a cut until the reconnect): the
   * frames the witness saw then are not counted as lost (the resync makes up for the status they
   * announced, not for the frames).
   */
  gaps: { from: number; to: number }[];
}

export interface Violation {
  promise: PromiseName;
  detail: string;
}

/**
 * How long before Reflex's call an operator's stop, silence or opt-out must have landed to count:
 * Reflex re-reads each at the moment of acting (a stop as the stream reports its operation), and
 * one arriving between that read and the call is a race no re-check closes (the daemon has no
 * conditional state change).
 */
const raceMs = 300;

type Cause =
  | { at: number; kind: 'operator-stop' | 'operator-start' | 'create' | 'delete'; name: string }
  | { at: number; kind: 'opt-out' | 'opt-in'; name: string }
  | { at: number; kind: 'crash' | 'error' | 'heal'; name: string }
  | { at: number; kind: 'reflex-start'; name: string; statusBefore: number }
  /** An operator's start the daemon refused (busy in a crash's stop hook): it changed nothing, but says what they want. */
  | { at: number; kind: 'operator-start-refused'; name: string };

const notRunning = (status: number) => status !== StatusCode.Running;

/** Checks every promise; an empty list when the history kept them all. */
export function checkPromises(o: Observation): Violation[] {
  const out: Violation[] = [];
  const timelines = new Map<string, Cause[]>();
  const push = (uuid: string, c: Cause) => {
    if (!timelines.has(uuid)) timelines.set(uuid, []);
    timelines.get(uuid)!.push(c);
  };
  // Per identity: Reflex's last start, and the operator's last stop (refused or not), for give-backs.
  const reflexStartAt = new Map<string, number>();
  const operatorStopAt = new Map<string, number>();
  for (const c of o.calls) {
    if (c.agent.startsWith(`${operatorAgent}/`)) {
      const step = c.agent.slice(operatorAgent.length + 1);
      if (c.action === 'stop') operatorStopAt.set(c.uuid, c.at);
      // A stop says what the operator wants even when the daemon refuses it (already stopped
      // after a crash): Reflex must not start the instance after it, as it does not.
      if (c.action === 'stop') push(c.uuid, { at: c.at, kind: 'operator-stop', name: c.name });
      else if (c.action === 'start' && c.result !== 'failure' && notRunning(c.statusBefore))
        push(c.uuid, { at: c.at, kind: 'operator-start', name: c.name });
      else if (c.action === 'start' && c.result === 'failure') push(c.uuid, { at: c.at, kind: 'operator-start-refused', name: c.name });
      // An opt-out or opt-in is a config change: one the daemon refused (LXD 5.0.2 and Incus 6.0
      // refuse an update while a crash's stop hook runs) changed nothing Reflex or anyone can read.
      else if (c.action === 'update' && (step === 'opt-out' || step === 'opt-in') && c.result !== 'failure')
        push(c.uuid, { at: c.at, kind: step, name: c.name });
      // Likewise a delete or create the daemon refused (busy in a stop hook) made no new instance.
      else if (c.action === 'create' && c.result !== 'failure') push(c.uuid, { at: c.at, kind: 'create', name: c.name });
      else if (c.action === 'delete' && c.result !== 'failure') push(c.uuid, { at: c.at, kind: 'delete', name: c.name });
      continue;
    }
    // A state change the daemon refused (busy, already running) changed nothing.
    if (c.result === 'failure') continue;
    // Reflex's start force-stops an Error (112) instance first: part of the start, not a decision.
    if (c.action === 'stop' && c.statusBefore === StatusCode.Error) continue;
    // Reflex gives back a start of its own that an operator's stop met in flight (the daemon
    // refused the stop), or that came within the re-check's race after it: a stop of Reflex's
    // after its start, the operator having stopped the instance since the incident that start answered.
    const started = reflexStartAt.get(c.uuid);
    if (c.action === 'stop' && started !== undefined) {
      const incidents = o.incidents.filter((i) => i.uuid === c.uuid && i.at <= started).map((i) => i.at);
      const since = incidents.length ? Math.max(...incidents) : started;
      if ((operatorStopAt.get(c.uuid) ?? -Infinity) >= since - (o.orderSlackMs ?? 0)) continue;
    }
    if (c.action === 'start') {
      reflexStartAt.set(c.uuid, c.at);
      if (notRunning(c.statusBefore)) push(c.uuid, { at: c.at, kind: 'reflex-start', name: c.name, statusBefore: c.statusBefore });
      continue;
    }
    out.push({
      promise: 'own-actions',
      detail: `Reflex sent "${c.action}" to ${c.name} (${short(c.uuid)}) at ${clock(c.at)}; no rule of this run asks for it`,
    });
  }
  for (const i of o.incidents) push(i.uuid, { at: i.at, kind: i.kind, name: i.name });

  const silencedAt = (name: string, at: number) => o.silences.some((s) => s.name === name && s.at <= at - raceMs && s.until > at);
  const silencedSince = (name: string, from: number) => o.silences.some((s) => s.name === name && s.until > from);
  const pending: { uuid: string; cause: Cause }[] = [];

  for (const [uuid, causes] of timelines) {
    causes.sort((a, b) => a.at - b.at);
    let optedIn = true;
    let optOutAt = 0;
    let last: Cause | undefined;
    let consumed = false;
    // An incident on an instance opted out then is not Reflex's to heal, even if it opts in later.
    let optedInAtLast = true;
    let wantsRunning = false;
    for (const c of causes) {
      if (c.kind === 'opt-out') {
        optedIn = false;
        optOutAt = c.at;
        continue;
      }
      if (c.kind === 'opt-in') {
        optedIn = true;
        continue;
      }
      // A stop the operator took back with a start, both refused (a re-create sent into a crash's
      // stop hook): their last word is that it runs, and a start of Reflex's for the crash undoes nothing.
      if (c.kind === 'operator-start-refused') {
        if (last?.kind === 'operator-stop') wantsRunning = true;
        continue;
      }
      if (c.kind !== 'reflex-start') {
        wantsRunning = false;
        last = c;
        consumed = false;
        optedInAtLast = optedIn;
        continue;
      }
      const what = `Reflex started ${c.name} (${short(uuid)}, status ${c.statusBefore}) at ${clock(c.at)}`;
      if (!last || last.kind === 'create' || last.kind === 'operator-start') {
        const elsewhere = o.incidents.find((i) => i.name === c.name && i.uuid !== uuid && i.at < c.at);
        out.push(
          elsewhere
            ? {
                promise: 'identity',
                detail: `${what}; the incident (${elsewhere.kind} at ${clock(elsewhere.at)}) was another instance's of that name (${short(elsewhere.uuid)})`,
              }
            : {
                promise: 'own-actions',
                detail: `${what} with no incident since ${last ? `its ${last.kind} at ${clock(last.at)}` : 'it was first seen'}`,
              },
        );
      } else if (last.kind === 'operator-stop' && !wantsRunning && c.at - last.at >= Math.max(o.orderSlackMs ?? 0, raceMs)) {
        out.push({ promise: 'operator-decision', detail: `${what}, ${c.at - last.at} ms after the operator stopped it` });
      } else if (consumed) {
        out.push({ promise: 'once', detail: `${what}: a second start for the ${last.kind} at ${clock(last.at)}` });
      } else if (last.kind !== 'heal' && !optedIn && c.at - optOutAt >= raceMs) {
        out.push({
          promise: 'operator-decision',
          detail: `${what} for the ${last.kind} at ${clock(last.at)}, ${c.at - optOutAt} ms after the operator opted it out`,
        });
      } else if (last.kind !== 'heal' && silencedAt(c.name, c.at)) {
        out.push({
          promise: 'operator-decision',
          detail: `${what} for the ${last.kind} at ${clock(last.at)}, inside the operator's silence of ${c.name}`,
        });
      }
      consumed = true;
    }
    if (
      last &&
      (last.kind === 'crash' || last.kind === 'error') &&
      !consumed &&
      optedIn &&
      optedInAtLast &&
      !silencedSince(last.name, last.at - raceMs)
    )
      pending.push({ uuid, cause: last });
  }

  const alerts = o.audit.filter((r) => r.type === 'alert');
  for (const { uuid, cause } of pending) {
    const now = o.final.find((f) => f.uuid === uuid);
    if (!now || now.status === StatusCode.Running) continue;
    const names = new Set([cause.name, now.name]);
    const alerted = alerts.some((a) => a.instance !== undefined && names.has(a.instance) && Date.parse(a.at) >= cause.at - 1_000);
    if (!alerted)
      out.push({
        promise: 'unknown-cause',
        detail: `${now.name} (${short(uuid)}) had a ${cause.kind} at ${clock(cause.at)}, opted in, no silence: it ended with status ${now.status}, not healed and no alert`,
      });
  }

  const audited = new Set(o.audit.filter((r) => r.type === 'event').map((r) => r.correlationId));
  const readable = o.frames.filter((f) => !o.gaps.some((g) => f.at >= g.from && f.at <= g.to));
  const lost = readable.filter((f) => !audited.has(f.id));
  if (lost.length)
    out.push({
      promise: 'no-loss',
      detail: `${lost.length} of ${readable.length} lifecycle frames have no audit record (${o.frames.length - readable.length} more came in a gap): ${lost
        .slice(0, 4)
        .map((f) => `${f.action} of ${f.name}`)
        .join(', ')}`,
    });

  out.push(...unresolvedAlerts(o, alerts));
  for (const d of o.died) out.push({ promise: 'alive', detail: d });
  return out;
}

/**
 * Kinds that are notices: about a moment (one frame), shown once and ending by themselves
 * (src/alerts/alert.ts `notice`). Their audit record does not say so, hence the list.
 */
const noticeKinds = new Set(['event.contradicted']);

/** Alerts still firing at the end whose condition no longer holds (the instance Running, or gone). */
function unresolvedAlerts(o: Observation, alerts: StoredAuditRecord[]): Violation[] {
  const out: Violation[] = [];
  const resolved = new Set(alerts.filter((a) => a.resolved === true).map((a) => String(a.fingerprint)));
  const seen = new Set<string>();
  for (const a of alerts) {
    const fp = String(a.fingerprint ?? '');
    if (a.resolved === true || a.notice === true || noticeKinds.has(String(a.kind)) || !a.instance || resolved.has(fp) || seen.has(fp)) continue;
    seen.add(fp);
    const at = Date.parse(a.at);
    const uuid = identityAt(o, a.instance, at);
    const now = uuid === undefined ? undefined : o.final.find((f) => f.uuid === uuid);
    if (now && notRunning(now.status)) continue;
    out.push({
      promise: 'alerts-resolve',
      detail: `alert "${String(a.kind ?? a.summary)}" on ${a.instance} at ${clock(at)} still fires, but ${
        uuid === undefined ? 'no instance of that name existed then' : now ? `${now.name} is Running` : 'the instance was deleted'
      }`,
    });
  }
  return out;
}

/** The identity an instance name had at a moment, from the daemon's calls and the incidents. */
function identityAt(o: Observation, name: string, at: number): string | undefined {
  const marks = [...o.calls.map((c) => ({ at: c.at, name: c.name, uuid: c.uuid })), ...o.incidents, ...o.final.map((f) => ({ at: Infinity, ...f }))]
    .filter((m) => m.name === name && m.uuid)
    .sort((x, y) => x.at - y.at);
  const before = marks.filter((m) => m.at <= at + 1_000);
  return (before[before.length - 1] ?? marks[0])?.uuid;
}

const short = (uuid: string) => uuid.slice(0, 8) || 'no uuid';
const clock = (ms: number) => new Date(ms).toISOString().slice(11, 23);
