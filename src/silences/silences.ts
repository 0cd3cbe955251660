import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../clock/clock.js';
import type { RedisConnection } from '../redis/connect.js';
import { z } from 'zod';
import type { Instance } from '../client/instance.js';
import { evaluateFilter } from '../filter/evaluator.js';
import { parseFilter } from '../filter/parser.js';
import { ReflexError } from '../errors/reflex-error.js';
import type { Alert } from '../alerts/alert.js';
import type { AuditLog } from '../audit/audit-log.js';

/** What a silence mutes: rule actions (suppressed and recorded as such), notifications (left out of messages), or both. */
export const silenceMutes = ['actions', 'notifications'] as const;
export type SilenceMute = (typeof silenceMutes)[number];

/**
 * A silence (maintenance window): while it lasts, rule *actions* in its scope are suppressed and
 * recorded as such, and alerts in its scope are left out of notifications, as its `mutes` says;
 * events and decisions are still audited. An empty scope field matches anything.
 */
export const silenceSchema = z.object({
  id: z.string(),
  scope: z.object({
    instance: z.string().optional(),
    project: z.string().optional(),
    /** Cluster member (`location`). */
    location: z.string().optional(),
    target: z.string().optional(),
    /** Filter-language expression evaluated on the instance object, e.g. `config.user.tier eq db`. */
    filter: z.string().optional(),
  }),
  /** Silences stored before this field existed muted actions only. */
  mutes: z.array(z.enum(silenceMutes)).min(1).default(['actions']),
  reason: z.string(),
  createdBy: z.string(),
  /** Where it was made: `cli`, `dashboard`. */
  origin: z.string().optional(),
  createdAt: z.string(),
  until: z.string(),
});
export type Silence = z.infer<typeof silenceSchema>;

/** What a silence is checked against. */
export interface SilenceSubject {
  target: string;
  project: string;
  location: string;
  instance?: string;
  object?: Instance;
}

/** Silences in Redis (one hash), shared by all replicas; expired ones are ignored and pruned. */
export class Silences {
  constructor(
    private readonly redis: RedisConnection,
    private readonly key: string,
    /** Where adding and removing a silence is recorded (type `silence`). Default: not recorded. */
    private readonly audit?: AuditLog,
    /** The time a silence starts at and is over against. Default: the wall clock. */
    private readonly clock: Clock = systemClock,
  ) {}

  /**
   * Adds a silence. `mutes` defaults to both actions and notifications (a maintenance window is
   * quiet), but to actions only with a `filter` scope: a filter is evaluated on the instance object,
   * which an alert does not carry, so such a silence cannot mute notifications (asking for it is
   * CONFIG_INVALID).
   */
  async add(input: {
    scope: Silence['scope'];
    reason: string;
    createdBy?: string;
    durationMs: number;
    mutes?: SilenceMute[];
    origin?: string;
  }): Promise<Silence> {
    if (input.scope.filter) parseFilter(input.scope.filter); // reject a bad filter now, not at match time
    const mutes = input.mutes?.length ? [...new Set(input.mutes)] : input.scope.filter ? ['actions' as const] : [...silenceMutes];
    if (input.scope.filter && mutes.includes('notifications'))
      throw new ReflexError(
        'CONFIG_INVALID',
        'a silence scoped by --filter cannot mute notifications: alerts do not carry the instance object the filter reads; scope it by instance, project, member or target',
      );
    const now = this.clock.now();
    const silence: Silence = {
      id: randomUUID().slice(0, 8),
      scope: input.scope,
      mutes,
      reason: input.reason,
      createdBy: input.createdBy ?? process.env.USER ?? 'unknown',
      createdAt: new Date(now).toISOString(),
      until: new Date(now + input.durationMs).toISOString(),
      ...(input.origin ? { origin: input.origin } : {}),
    };
    await this.redis.hset(this.key, silence.id, JSON.stringify(silence));
    await this.audit?.append({
      type: 'silence',
      correlationId: `silence-${silence.id}`,
      ...(silence.scope.instance ? { instance: silence.scope.instance } : {}),
      ...(silence.scope.target ? { target: silence.scope.target } : {}),
      summary: `silence ${silence.id} added${silence.origin ? ` from the ${silence.origin}` : ''} by ${silence.createdBy} until ${silence.until}: mutes ${silence.mutes.join(' and ')} of ${scopeText(silence.scope)} (${silence.reason})`,
      result: 'added',
      silenceId: silence.id,
      scope: silence.scope,
      mutes: silence.mutes,
      until: silence.until,
      createdBy: silence.createdBy,
      ...(silence.origin ? { origin: silence.origin } : {}),
    });
    return silence;
  }

  async remove(id: string, by: { createdBy?: string; origin?: string } = {}): Promise<boolean> {
    const removed = (await this.redis.hdel(this.key, id)) > 0;
    if (removed)
      await this.audit?.append({
        type: 'silence',
        correlationId: `silence-${id}`,
        summary: `silence ${id} removed${by.origin ? ` from the ${by.origin}` : ''} by ${by.createdBy ?? process.env.USER ?? 'unknown'}`,
        result: 'removed',
        silenceId: id,
        ...(by.origin ? { origin: by.origin } : {}),
      });
    return removed;
  }

  /** Active silences, oldest first. */
  async list(now = this.clock.now()): Promise<Silence[]> {
    const raw = await this.redis.hvals(this.key);
    const all = raw.map((r) => silenceSchema.parse(JSON.parse(r)));
    const expired = all.filter((s) => Date.parse(s.until) <= now);
    if (expired.length) await this.redis.hdel(this.key, ...expired.map((s) => s.id));
    return all.filter((s) => Date.parse(s.until) > now).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  /** The first active silence muting actions that covers the subject, if any. */
  async matching(subject: SilenceSubject): Promise<Silence | undefined> {
    return matchingSilence(await this.list(), subject);
  }

  /**
   * The alerts an active silence mutes notifications of, fingerprint → `silence ID (reason)`.
   * An alert is matched by its target, project, instance and member; a silence scoped by member
   * does not cover an alert that names no member.
   */
  async mutingNotifications(alerts: Alert[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    const silences = (await this.list()).filter((s) => s.mutes.includes('notifications'));
    if (!silences.length) return out;
    for (const a of alerts) {
      const s = matchingSilence(silences, { target: a.target, project: a.project, location: a.member ?? '', instance: a.instance }, 'notifications');
      if (s) out.set(a.fingerprint, `silence ${s.id} (${s.reason})`);
    }
    return out;
  }
}

/** A silence's scope as `instance=web-1 project=default`, or `everything`. */
export function scopeText(scope: Silence['scope']): string {
  return (
    Object.entries(scope)
      .filter(([, v]) => v)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ') || 'everything'
  );
}

/** The first of `silences` muting `what` (default actions) that covers the subject, if any. */
export function matchingSilence(silences: Silence[], subject: SilenceSubject, what: SilenceMute = 'actions'): Silence | undefined {
  for (const s of silences) {
    if (!s.mutes.includes(what)) continue;
    const sc = s.scope;
    if (sc.instance && sc.instance !== subject.instance) continue;
    if (sc.project && sc.project !== subject.project) continue;
    if (sc.location && sc.location !== subject.location) continue;
    if (sc.target && sc.target !== subject.target) continue;
    if (sc.filter && !(subject.object && evaluateFilter(parseFilter(sc.filter), subject.object))) continue;
    return s;
  }
  return undefined;
}
