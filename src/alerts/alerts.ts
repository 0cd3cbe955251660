import { ReflexError } from '../errors/reflex-error.js';
import { alertFingerprint, toAlert, type Alert, type AlertChange, type AlertInput, type Severity } from './alert.js';

export { actionFailedKind, contradictedKind, crashLoopKind, giveBackFailedKind, stormKind } from './catalogue.js';

/**
 * The audit record of an alert raised or resolved (type `alert`): the alert's place, kind,
 * severity and fingerprint, in the trail of its correlation id.
 */
export type AlertRecord = {
  type: 'alert';
  correlationId: string;
  target?: string;
  project?: string;
  instance?: string;
  summary: string;
  severity: Severity;
  kind: string;
  fingerprint: string;
  resolved?: true;
} & Record<string, unknown>;

/**
 * The audit log as alerts use it (the process's `AuditLog`; `alerts/` sits below `audit/`, so it
 * names only what it calls). With `once`, a record is appended only the first time that key is
 * given; a repeat answers ''. `forget` gives a once-key back (the next append with it records again).
 */
export interface AlertAudit {
  append(record: AlertRecord, opts?: { once?: string }): Promise<string>;
  forget(once: string): Promise<void>;
  recorded(once: string): Promise<boolean>;
}

/** The notifier as alerts use it (the process's `Notifier`, which imports this folder). */
/**
 * Where the alerts raised without a notifier are kept while they fire (a Redis hash), so that
 * {@link Alerts.resolveFiring} audits their end as it does a notifier's: `get` the firing alert,
 * audit its end, then `drop` it (a failed audit leaves it firing for the retry).
 */
export interface OpenAlerts {
  keep(alert: Alert): Promise<void>;
  get(fingerprint: string): Promise<Alert | undefined>;
  /** The alerts of many fingerprints, in order (undefined where none is kept), read at once. */
  getMany(fingerprints: readonly string[]): Promise<(Alert | undefined)[]>;
  drop(fingerprint: string): Promise<void>;
  /** Every alert kept open. */
  list(): Promise<Alert[]>;
}

/** {@link OpenAlerts} in a Redis hash, fingerprint → alert JSON. */
export function openAlertsIn(
  redis: {
    hset(key: string, field: string, value: string): Promise<unknown>;
    hget(key: string, field: string): Promise<string | null>;
    hmget(key: string, ...fields: string[]): Promise<(string | null)[]>;
    hdel(key: string, field: string): Promise<number>;
    hvals(key: string): Promise<string[]>;
  },
  key: string,
): OpenAlerts {
  return {
    keep: async (alert) => void (await redis.hset(key, alert.fingerprint, JSON.stringify(alert))),
    get: async (fingerprint) => {
      const raw = await redis.hget(key, fingerprint);
      return raw ? (JSON.parse(raw) as Alert) : undefined;
    },
    getMany: async (fingerprints) =>
      fingerprints.length ? (await redis.hmget(key, ...fingerprints)).map((raw) => (raw ? (JSON.parse(raw) as Alert) : undefined)) : [],
    drop: async (fingerprint) => void (await redis.hdel(key, fingerprint)),
    list: async () => (await redis.hvals(key)).map((raw) => JSON.parse(raw) as Alert),
  };
}

export interface AlertNotifier {
  notify(input: AlertInput, opts?: { receiver?: string }): Promise<Alert>;
  amend(fingerprint: string, change: (known: Alert) => AlertChange | undefined | Promise<AlertChange | undefined>): Promise<Alert | undefined>;
  /** Sends at once to the routed receivers without Redis; answers each receiver's outcome. */
  sendDirect?(input: AlertInput): Promise<{ receiver: string; status?: number; error?: string }[]>;
}

/** How {@link Alerts.raise} and {@link Alerts.resolve} record an alert. */
export interface RaiseOptions {
  /**
   * Raised only the first time this key is given (the audit's once-key): a retried job or another
   * replica raising the same alert is neither audited nor sent again. A send the notifier does not
   * accept gives the key back, so the retry of the failed call raises it (audited again).
   * Default: every call.
   */
  once?: string;
  /** Fields of the audit record besides the alert's own, or in their place (the rule; the instance whose trail holds it). */
  record?: Record<string, unknown>;
  /** Send to this receiver instead of routing. Default: routed. */
  receiver?: string;
}

/** What an alert is about, for {@link Alerts.resolveFiring}. */
export interface AlertSubject {
  target: string;
  project: string;
  instance: string;
}

/** Why an alert clears: one line, how it ended (`recovered`, `remediated`), and when (default now). */
export interface Resolution {
  summary: string;
  outcome: string;
  endsAt?: string;
}

/**
 * Every alert Reflex raises goes through here, built once per process: {@link raise} audits it
 * (an `alert` record in its incident's trail) and then hands it to the notifier, which routes,
 * groups and sends it; {@link resolve} and {@link resolveFiring} end it the same way. Without a
 * notifier (no receivers configured, or a scheduler-only process) alerts are audited only.
 */
export class Alerts {
  constructor(private readonly deps: { audit: AlertAudit; notifier?: AlertNotifier | undefined; open?: OpenAlerts | undefined }) {}

  /** Whether alerts reach receivers (a notifier is configured), not only the audit. */
  get notifying(): boolean {
    return this.deps.notifier !== undefined;
  }

  /**
   * Raises an alert: audits it, then notifies. Returns the alert as stored (as built, when there is
   * no notifier), or undefined when `once` had been given before (nothing audited or sent). Throws
   * when the notifier does not accept it, the once-key given back.
   */
  async raise(input: AlertInput, opts: RaiseOptions = {}): Promise<Alert | undefined> {
    const alert = toAlert(input);
    const notifier = this.deps.notifier;
    const { open, audit } = this.deps;
    // Kept open before it is audited, unless its once-key says it was raised already (it may have
    // ended since): a process killed, or a Redis that fills up, between the two leaves an alert
    // kept and not yet audited, which the retry audits, never one audited and never kept, which
    // nothing would ever end.
    if (!notifier && open && alert.status !== 'resolved' && !(opts.once && (await audit.recorded(opts.once)))) await open.keep(alert);
    const fresh = await audit.append(recordOf(alert, alert.severity, opts.record), opts.once ? { once: opts.once } : {});
    if (!fresh) return undefined;
    if (!notifier) return alert;
    return this.sent(alert.kind, opts.once, () => notifier.notify(input, opts.receiver === undefined ? {} : { receiver: opts.receiver }));
  }

  /**
   * The fallback path, for when Redis refuses writes (full, a read-only replica, MISCONF) and
   * {@link raise} can neither audit nor queue: sends the alert (firing or resolved, by its
   * `status`) straight to the receivers its routes name, storing nothing. The caller keeps track
   * of what it sent this way and audits it once Redis takes writes again. Answers the receivers
   * that took it; none without a notifier.
   */
  async raiseDirect(input: AlertInput): Promise<string[]> {
    const outcomes = (await this.deps.notifier?.sendDirect?.(input)) ?? [];
    return outcomes.filter((o) => o.status !== undefined).map((o) => o.receiver);
  }

  /**
   * Audits an alert {@link raiseDirect} sent while Redis refused writes, once it takes them again:
   * the record says it went by the fallback path and which receivers took it.
   */
  async recordDirect(input: AlertInput, receivers: string[]): Promise<void> {
    const alert = toAlert(input);
    const resolved = alert.status === 'resolved';
    await this.deps.audit.append(
      recordOf(alert, resolved ? 'info' : alert.severity, { ...(resolved ? { resolved: true } : {}), sentDirectly: receivers }),
    );
  }

  /**
   * Resolves an alert whose raiser keeps track of it itself (its own key, flag or stored level says
   * it was raised): audits the resolution (`resolved: true`), then sends the alert's resolved state,
   * which clears it at the receivers that got the firing one. `input` is the alert as raised, with
   * the summary of its end.
   */
  async resolve(input: AlertInput, opts: Omit<RaiseOptions, 'receiver'> = {}): Promise<void> {
    const resolved: AlertInput = { ...input, status: 'resolved' };
    const fresh = await this.deps.audit.append(
      recordOf(toAlert(resolved), 'info', { resolved: true, ...opts.record }),
      opts.once ? { once: opts.once } : {},
    );
    const notifier = this.deps.notifier;
    if (fresh && notifier) await this.sent(input.kind, opts.once, () => notifier.notify(resolved));
    else if (fresh) await this.deps.open?.drop(toAlert(resolved).fingerprint);
  }

  /**
   * Hands an alert just audited under `once` to the notifier. The key is claimed before the send
   * (so two replicas never both send) and given back when the notifier throws: kept, it would
   * answer the caller's retry "already raised" and the alert would never go out.
   */
  private async sent<T>(kind: string, once: string | undefined, send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (err) {
      if (once === undefined) throw err;
      await this.deps.audit.forget(once).catch((lost: unknown) => {
        throw new ReflexError(
          'REDIS_UNAVAILABLE',
          `alert ${kind} not sent (${messageOf(err)}), and its once-key ${once} not given back (${messageOf(lost)}): a retry takes it for raised`,
          { cause: lost },
        );
      });
      throw err;
    }
  }

  /**
   * Changes what a known alert says (its actions, outcome, severity) or resolves it, through the
   * notifier; `change` answers undefined to leave it. A resolution is audited as
   * {@link resolveFiring} audits one, so every alert raised through {@link raise} ends in the
   * trail where it began (an instance's incident, whose end may wait for the report of Reflex's
   * action). Without a notifier nothing is kept to amend: undefined.
   */
  async amend(fingerprint: string, change: (known: Alert) => Promise<AlertChange | undefined>): Promise<Alert | undefined> {
    const notifier = this.deps.notifier;
    if (!notifier) return undefined;
    let resolving = false;
    const stored = await notifier.amend(fingerprint, async (known) => {
      const fields = await change(known);
      resolving = fields?.status === 'resolved';
      return fields;
    });
    if (stored && resolving)
      await this.deps.audit.append(recordOf(stored, 'info', { summary: `${stored.kind} resolved: ${stored.summary}`, resolved: true }));
    return stored;
  }

  /**
   * Resolves the alert of `kind` about the subject if one fires, for conditions whose end Reflex
   * sees without having tracked their start (Running again ends a crash loop), and audits that.
   * The episode is over: the next time the condition arises, a new alert fires, and so a new
   * message. Returns the resolved alert, or undefined when none was firing (most recoveries have
   * none; another replica or path may have resolved it first). Without a notifier, the alerts
   * {@link raise} kept open (when given where) are the ones that fire; without either, undefined.
   */
  async resolveFiring(kind: string, subject: AlertSubject, why: Resolution, opts: ResolveFiringOptions = {}): Promise<Alert | undefined> {
    return (await this.resolveEachFiring([kind], subject, why, opts))[0];
  }

  /**
   * {@link resolveFiring} for several kinds of alert about one subject (an instance Running again
   * ends its crash, Error, failed start, action-failed and crash-loop alerts), answering each in
   * order. Their fingerprints are looked up at once: without a notifier one read of the alerts kept
   * open, with one the notifier's lookups side by side, instead of one round trip after another.
   */
  async resolveEachFiring(
    kinds: readonly string[],
    subject: AlertSubject,
    why: Resolution,
    opts: ResolveFiringOptions = {},
  ): Promise<(Alert | undefined)[]> {
    const { notifier, audit, open } = this.deps;
    const fingerprints = kinds.map((kind) =>
      alertFingerprint({ kind, target: subject.target, project: subject.project, instance: subject.instance }),
    );
    const end = { status: 'resolved', endsAt: why.endsAt ?? new Date().toISOString(), summary: why.summary, outcome: why.outcome } as const;
    // With `startsAt`, only that episode ends: one that began since (a new crash) stays firing.
    const sameEpisode = (known: Alert) => opts.startsAt === undefined || known.startsAt === opts.startsAt;
    const ending = async (kind: string, fingerprint: string, resolved: Alert | undefined): Promise<Alert | undefined> => {
      if (!resolved) return undefined;
      const record = recordOf(resolved, 'info', { summary: `${kind} resolved: ${why.summary}`, resolved: true, ...opts.record });
      // Kept open without a notifier: audited once (replicas may both read it firing), then dropped.
      await audit.append(record, notifier ? {} : { once: `alert-end:${fingerprint}:${resolved.startsAt}` });
      if (!notifier) await open?.drop(fingerprint);
      return resolved;
    };
    if (notifier)
      return Promise.all(
        fingerprints.map(async (fingerprint, i) =>
          // amend answers an unknown fingerprint without taking the alert's lock: most recoveries have no such alert.
          ending(
            kinds[i]!,
            fingerprint,
            await notifier.amend(fingerprint, (known) => (known.status === 'firing' && sameEpisode(known) ? end : undefined)),
          ),
        ),
      );
    const known = open ? await open.getMany(fingerprints) : [];
    return Promise.all(
      fingerprints.map((fingerprint, i) => {
        const alert = known[i];
        return ending(kinds[i]!, fingerprint, alert && sameEpisode(alert) ? { ...alert, ...end } : undefined);
      }),
    );
  }
}

/** Options of {@link Alerts.resolveFiring}: the audit record's extra fields, and the one episode to end (its `startsAt`). */
export type ResolveFiringOptions = Pick<RaiseOptions, 'record'> & { startsAt?: string };

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function recordOf(alert: Alert, severity: Severity, extra: Record<string, unknown> = {}): AlertRecord {
  return {
    type: 'alert',
    correlationId: alert.correlationId,
    target: alert.target,
    project: alert.project,
    instance: alert.instance,
    summary: alert.summary,
    severity,
    kind: alert.kind,
    fingerprint: alert.fingerprint,
    ...extra,
  };
}
