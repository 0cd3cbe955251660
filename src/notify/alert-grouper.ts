import { createHash, randomUUID } from 'node:crypto';
import type { Queue } from 'bullmq';
import type { RedisConnection } from '../redis/connect.js';
import { systemClock, type Clock } from '../clock/clock.js';
import { z } from 'zod';
import { ReflexError } from '../errors/reflex-error.js';
import { alertSchema, alertValue, type Alert } from '../alerts/alert.js';
import type { Notification } from './notification.js';
import type { NotifyKeys } from '../redis/key-space.js';
import { TokenLock } from '../redis/token-lock.js';
import type { MatchedRoute } from './router.js';

/** A group: its route, receiver settings and the values of its group_by keys; the data of its flush jobs. */
export const flushJobSchema = z.object({
  groupKey: z.string(),
  groupLabels: z.record(z.string(), z.string()),
  route: z.object({
    id: z.string(),
    receiver: z.string(),
    groupBy: z.array(z.string()),
    groupWaitMs: z.number(),
    groupIntervalMs: z.number(),
    repeatIntervalMs: z.number(),
  }),
  /** The receiver's `sendResolved` when the group last got an alert. */
  sendResolved: z.boolean().default(true),
  /** Which scheduled flush this is: only the group's current one acts (see {@link AlertGrouper.flush}). */
  flushId: z.string().optional(),
});
export type FlushJob = z.infer<typeof flushJobSchema>;

/** Decides which alerts of a group are left out of its messages (silenced, inhibited), fingerprint → why. */
export type AlertMute = (alerts: Alert[]) => Promise<Map<string, string>>;

/** The group an alert falls in on a route: route, receiver and the values of its group_by keys. */
export function groupOf(alert: Alert, route: MatchedRoute, sendResolved = true): FlushJob {
  const groupLabels: Record<string, string> = {};
  for (const k of route.groupBy) groupLabels[k] = alertValue(alert, k) ?? '';
  const groupKey = createHash('sha256')
    .update(JSON.stringify([route.id, route.receiver, groupLabels]))
    .digest('hex')
    .slice(0, 24);
  return { groupKey, groupLabels, route, sendResolved };
}

/** What a group holds in Redis at one moment. */
export interface GroupState {
  /** Its alerts, in the order they happened. */
  alerts: { alert: Alert; raw: string }[];
  /** Alertmanager's notification log: fingerprint → status in the group's last message. */
  notified: Record<string, string>;
  /** Time (ms) of its last message; 0 when none. */
  lastSent: number;
  /** The scheduled flush: its id and when it is due. */
  scheduled?: { id: string; at: number };
}

/** What a flush sends. */
export interface FlushDecision {
  status: 'firing' | 'resolved';
  /** The alerts of the message, in the order they happened. */
  alerts: Alert[];
  repeat: boolean;
}

/**
 * Alertmanager's decision (its dedup stage), on the alerts a silence or inhibition left in:
 * a group never notified sends when something fires; then a message goes out when an alert fires
 * that the last message did not show firing, when every alert has cleared and the last message
 * showed some firing, or (with `sendResolved`) when an alert resolved since; else only a repeat
 * after `repeatIntervalMs`. The message lists every alert still in the group, firing or resolved,
 * including those that fired and cleared since the last message; without `sendResolved`, the
 * firing ones only. Undefined: nothing to send.
 */
export function decideFlush(
  visible: Alert[],
  state: Pick<GroupState, 'notified' | 'lastSent'>,
  opts: { sendResolved: boolean; repeatIntervalMs: number; now: number },
): FlushDecision | undefined {
  const firing = visible.filter((a) => a.status === 'firing');
  const resolved = visible.filter((a) => a.status === 'resolved');
  const previous = Object.entries(state.notified);
  const everSent = previous.length > 0 || state.lastSent > 0;
  const wasFiring = new Set(previous.filter(([, s]) => notifiedStatus(s) === 'firing').map(([fp]) => fp));
  let send: boolean;
  let repeat = false;
  if (!everSent) send = firing.length > 0;
  else if (firing.some((a) => !wasFiring.has(a.fingerprint))) send = true;
  // An update of an alert the receiver holds firing: its triage changed since the last message.
  else if (firing.some((a) => a.triage && state.notified[a.fingerprint] !== notifiedState(a))) send = true;
  // All cleared: say so, if the receiver was told something fires (fired-and-cleared-unseen alone is not news).
  else if (firing.length === 0) send = wasFiring.size > 0;
  else if (opts.sendResolved && resolved.some((a) => state.notified[a.fingerprint] !== 'resolved')) send = true;
  else send = repeat = opts.now - state.lastSent >= opts.repeatIntervalMs;
  const alerts = opts.sendResolved ? visible : firing;
  if (!send || alerts.length === 0) return undefined;
  return { status: firing.length ? 'firing' : 'resolved', alerts, repeat };
}

/**
 * What the notification log keeps of an alert a message showed: its status, and for a firing alert
 * with a triage its revision (`firing:3`), so a triage change is news to the receiver.
 */
export function notifiedState(a: Alert): string {
  return a.status === 'firing' && a.triage ? `firing:${a.triage.revision}` : a.status;
}

/** The status part of a notification log entry (`firing:3` → `firing`). */
export function notifiedStatus(entry: string): string {
  return entry.split(':')[0]!;
}

/** Alerts in the order they happened: by start, then end, then fingerprint (stable across replicas). */
export function inOrderOfHappening(alerts: Alert[]): Alert[] {
  const t = (s: string | undefined) => (s ? Date.parse(s) : Number.POSITIVE_INFINITY);
  return [...alerts].sort(
    (a, b) =>
      t(a.startsAt) - t(b.startsAt) || t(a.endsAt) - t(b.endsAt) || (a.fingerprint < b.fingerprint ? -1 : a.fingerprint > b.fingerprint ? 1 : 0),
  );
}

/** Reads a group's alerts (dropping unreadable entries), notification log, last message time and scheduled flush. */
export async function readGroupState(redis: RedisConnection, keys: NotifyKeys, groupKey: string): Promise<GroupState> {
  const [raw, notified, lastSent, scheduled] = await Promise.all([
    redis.hgetall(keys.group(groupKey)),
    redis.hgetall(keys.notified(groupKey)),
    redis.get(keys.lastSent(groupKey)),
    redis.get(keys.scheduled(groupKey)),
  ]);
  const parsed: { alert: Alert; raw: string }[] = [];
  for (const [fp, json] of Object.entries(raw)) {
    const a = alertSchema.safeParse(safeJson(json));
    if (a.success) parsed.push({ alert: a.data, raw: json });
    else await redis.hdel(keys.group(groupKey), fp);
  }
  const order = inOrderOfHappening(parsed.map((p) => p.alert));
  const alerts = order.map((a) => parsed.find((p) => p.alert === a)!);
  const sched = z.object({ id: z.string(), at: z.number() }).safeParse(safeJson(scheduled ?? ''));
  return { alerts, notified, lastSent: Number(lastSent ?? 0), scheduled: sched.success ? sched.data : undefined };
}

// Drops the resolved alerts that were handled, unless a replica changed them meanwhile; when the
// group is empty, forgets its scheduled flush and its entry among the pending groups, so the next
// alert opens a new group (with a new group wait).
const settleScript = `
for i = 2, #ARGV, 2 do
  if redis.call('HGET', KEYS[1], ARGV[i]) == ARGV[i + 1] then redis.call('HDEL', KEYS[1], ARGV[i]) end
end
local n = redis.call('HLEN', KEYS[1])
if n == 0 then
  redis.call('DEL', KEYS[2])
  redis.call('HDEL', KEYS[3], ARGV[1])
end
return n`;

// Replaces the scheduled flush only if no replica or flush changed it since it was read; the
// replaced flush job then finds another id in the marker and does nothing.
const rescheduleScript = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1`;

// Resolves notices a message showed: in the group (only if no replica raised it again since), the
// stored alert and the set of firing ones. KEYS[1] group, KEYS[2] firing set, KEYS[3..] the alerts;
// ARGV per notice: fingerprint, the group's entry as flushed, the resolved entry.
const endNoticesScript = `
for i = 3, #KEYS do
  local a = (i - 3) * 3
  if redis.call('HGET', KEYS[1], ARGV[a + 1]) == ARGV[a + 2] then
    redis.call('HSET', KEYS[1], ARGV[a + 1], ARGV[a + 3])
    redis.call('SET', KEYS[i], ARGV[a + 3], 'KEEPTTL')
    redis.call('ZREM', KEYS[2], ARGV[a + 1])
  end
end
return 0`;

/** Lifetime of a group's flush lock: renewed while the flush runs, so only a dead flusher's lapses. */
const flushLockMs = 10_000;

/**
 * Alertmanager-style grouping with its state in Redis, so replicas agree: a new group waits
 * group_wait, then sends; then it is flushed every group_interval while it holds alerts, each flush
 * sending what {@link decideFlush} says; resolved alerts leave the group once flushed. Each group
 * has one chain of delayed flush jobs (the current one's id is in its `scheduled` key, so a stray
 * duplicate job does nothing), and a flush runs under the group's lock, so one replica flushes a
 * group at a time. Silences and inhibition are applied at flush time, not when the alert fired.
 */
export class AlertGrouper {
  private readonly locks: TokenLock;

  constructor(
    private readonly redis: RedisConnection,
    private readonly keys: NotifyKeys,
    private readonly flushes: Queue,
    /** Enqueues a message for delivery (called at most once per notification id). */
    private readonly send: (n: Notification) => Promise<void>,
    /** Leaves alerts out of messages (silences, inhibition). Default: none. */
    private readonly mute: AlertMute = async () => new Map(),
    /** Reads the group wait, group interval and repeat interval against this time. Default: the wall clock. */
    private readonly clock: Clock = systemClock,
  ) {
    this.locks = new TokenLock(redis, { ttlMs: flushLockMs });
  }

  /** Puts the alert in its group and schedules the group's first flush if none is scheduled. */
  async add(alert: Alert, group: FlushJob, now = this.clock.now()): Promise<void> {
    const { groupKey, route } = group;
    const key = this.keys.group(groupKey);
    const prev = await this.redis.hget(key, alert.fingerprint);
    const stored = prev ? alertSchema.safeParse(safeJson(prev)) : undefined;
    // A replica or a repeated event re-raising a firing alert must not move its start.
    const value = stored?.success && stored.data.status === 'firing' ? { ...alert, startsAt: stored.data.startsAt } : alert;
    await this.redis.hset(key, alert.fingerprint, JSON.stringify(value));
    const { flushId: _, ...record } = group;
    await this.redis.hset(this.keys.groups, groupKey, JSON.stringify(record));
    const flushId = randomUUID();
    const marker = JSON.stringify({ id: flushId, at: now + route.groupWaitMs });
    const first = await this.redis.set(this.keys.scheduled(groupKey), marker, 'PX', markerTtl(route), 'NX');
    if (first) await this.enqueue({ ...group, flushId }, route.groupWaitMs);
    else if (alert.status === 'firing') await this.openForReceiver(group, marker, flushId, now);
  }

  /**
   * A group whose receiver was shown nothing firing (its alerts muted, or fired and cleared
   * unseen) is a new group to that receiver: a firing alert brings its flush forward to
   * group_wait, as the first alert of a new group would. Otherwise a silenced alert that keeps
   * the group alive would hold every other alert back to group_interval, long enough for a
   * healed crash to go unsent.
   */
  private async openForReceiver(group: FlushJob, marker: string, flushId: string, now: number): Promise<void> {
    const { groupKey, route } = group;
    const [notified, scheduled] = await Promise.all([this.redis.hvals(this.keys.notified(groupKey)), this.redis.get(this.keys.scheduled(groupKey))]);
    if (notified.some((s) => notifiedStatus(s) === 'firing') || scheduled === null) return;
    const at = z.object({ at: z.number() }).safeParse(safeJson(scheduled));
    if (at.success && at.data.at <= now + route.groupWaitMs) return;
    const moved = (await this.redis.eval(rescheduleScript, 1, this.keys.scheduled(groupKey), scheduled, marker, markerTtl(route))) === 1;
    if (moved) await this.enqueue({ ...group, flushId }, route.groupWaitMs);
  }

  /**
   * Runs one flush: sends what changed (or a due repeat), settles the group, schedules the next
   * flush. A flush that is not the group's current one returns without acting; one whose group
   * lost its scheduled marker (every replica down for longer than it lives) takes the group over.
   * Throws LOCK_LOST (retryable) while another replica flushes the group.
   */
  async flush(job: FlushJob, now = this.clock.now()): Promise<Notification | undefined> {
    const { groupKey } = job;
    const held = await this.locks.acquire(this.keys.groupLock(groupKey), 2 * flushLockMs, 50);
    if (!held) throw new ReflexError('LOCK_LOST', `group ${groupKey} is being flushed by another replica`);
    try {
      const state = await readGroupState(this.redis, this.keys, groupKey);
      if (state.scheduled && job.flushId !== undefined && state.scheduled.id !== job.flushId) return undefined;
      const stored = flushJobSchema.safeParse(safeJson((await this.redis.hget(this.keys.groups, groupKey)) ?? ''));
      const group = stored.success ? stored.data : job;
      const route = group.route;
      const all = state.alerts.map((a) => a.alert);
      const muted = all.length ? await this.mute(all) : new Map<string, string>();
      const visible = all.filter((a) => !muted.has(a.fingerprint));
      const decision = decideFlush(visible, state, { sendResolved: group.sendResolved, repeatIntervalMs: route.repeatIntervalMs, now });

      let sent: Notification | undefined;
      if (decision) {
        sent = {
          id: notificationId(groupKey, decision.alerts, decision.repeat ? `repeat:${state.lastSent}` : ''),
          receiver: route.receiver,
          groupKey,
          groupLabels: group.groupLabels,
          status: decision.status,
          alerts: decision.alerts,
          repeat: decision.repeat,
        };
        held.check();
        const fresh = await this.redis.set(this.keys.sent(sent.id), '1', 'PX', 7 * 86_400_000, 'NX');
        if (fresh) await this.send(sent);
        const logTtl = route.repeatIntervalMs + markerTtl(route);
        const m = this.redis.multi().del(this.keys.notified(groupKey));
        for (const a of visible) m.hset(this.keys.notified(groupKey), a.fingerprint, notifiedState(a));
        m.pexpire(this.keys.notified(groupKey), logTtl);
        m.set(this.keys.lastSent(groupKey), String(now), 'PX', logTtl);
        await m.exec();
        await this.endNotices(groupKey, state.alerts, decision.alerts, now);
      } else {
        // A muted alert is out of the receiver's view of the group, as a message would have left it
        // (see openForReceiver); it is sent as new if it still fires when its silence ends.
        const gone = Object.keys(state.notified).filter((fp) => muted.has(fp));
        if (gone.length) await this.redis.hdel(this.keys.notified(groupKey), ...gone);
      }
      const handled = state.alerts.filter((a) => a.alert.status === 'resolved').flatMap((a) => [a.alert.fingerprint, a.raw]);
      const left = (await this.redis.eval(
        settleScript,
        3,
        this.keys.group(groupKey),
        this.keys.scheduled(groupKey),
        this.keys.groups,
        groupKey,
        ...handled,
      )) as number;
      if (left > 0) {
        const flushId = randomUUID();
        await this.redis.set(this.keys.scheduled(groupKey), JSON.stringify({ id: flushId, at: now + route.groupIntervalMs }), 'PX', markerTtl(route));
        await this.enqueue({ ...group, flushId }, route.groupIntervalMs);
      }
      return sent;
    } finally {
      await held.release();
    }
  }

  /**
   * The notices a message has just shown firing resolve (see `notice` on the alert): the group's
   * next flush sends them resolved, and the board no longer lists them. One raised again since the
   * group was read is left firing for its own message.
   */
  private async endNotices(groupKey: string, stored: { alert: Alert; raw: string }[], shown: Alert[], now: number): Promise<void> {
    const fingerprints = new Set(shown.filter((a) => a.notice && a.status === 'firing').map((a) => a.fingerprint));
    const ended = stored.filter((s) => fingerprints.has(s.alert.fingerprint));
    if (ended.length === 0) return;
    const endsAt = new Date(now).toISOString();
    await this.redis.eval(
      endNoticesScript,
      2 + ended.length,
      this.keys.group(groupKey),
      this.keys.active,
      ...ended.map((s) => this.keys.alert(s.alert.fingerprint)),
      ...ended.flatMap((s) => [s.alert.fingerprint, s.raw, JSON.stringify({ ...s.alert, status: 'resolved', endsAt })]),
    );
  }

  private async enqueue(job: FlushJob, delayMs: number): Promise<void> {
    await this.flushes.add('flush', job, {
      delay: delayMs,
      jobId: `${job.groupKey}-${job.flushId}`,
      removeOnComplete: true,
      removeOnFail: { count: 1000 },
      attempts: 5,
      backoff: { type: 'exponential', delay: 200 },
    });
  }
}

/** The scheduled marker outlives a lost flush job only briefly, so a group can never stay stuck. */
function markerTtl(route: MatchedRoute): number {
  return 2 * Math.max(route.groupWaitMs, route.groupIntervalMs) + 60_000;
}

/** Same group and same alert states give the same id on every replica. */
function notificationId(groupKey: string, alerts: Alert[], salt: string): string {
  // A triage update is another message than the one before it (the same states otherwise).
  const states = alerts.map((a) => `${a.fingerprint}:${a.status}:${a.startsAt}${a.triage ? `:t${a.triage.revision}` : ''}`).sort();
  return createHash('sha256')
    .update(JSON.stringify([groupKey, states, salt]))
    .digest('hex')
    .slice(0, 32);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
