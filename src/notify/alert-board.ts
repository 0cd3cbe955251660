import type { RedisConnection } from '../redis/connect.js';
import { alertSchema, type Alert } from '../alerts/alert.js';
import { decideFlush, flushJobSchema, notifiedStatus, readGroupState, type AlertMute, type FlushDecision } from './alert-grouper.js';
import type { Inhibitor } from '../alerts/inhibition.js';
import type { NotifyKeys } from '../redis/key-space.js';
import type { Silences } from '../silences/silences.js';

/** An alert of a pending group, and why it is left out of messages when it is. */
export interface GroupedAlert {
  alert: Alert;
  /** Silence or inhibition that keeps it out of the messages, e.g. `silence 1a2b3c4d (kernel upgrade)`. */
  muted?: string;
  /** Its status in the group's last message; absent when no message showed it. */
  notified?: string;
}

/** A group waiting for its next flush, with what that flush would send if nothing changes before. */
export interface PendingGroup {
  groupKey: string;
  receiver: string;
  route: string;
  groupLabels: Record<string, string>;
  /** ISO time of the next flush; absent when none is scheduled (it is then rescheduled by the next alert). */
  nextFlushAt?: string;
  /** ISO time of the group's last message, if any. */
  lastSentAt?: string;
  alerts: GroupedAlert[];
  /** The message the next flush would send (undefined: none), as things are now. */
  next?: FlushDecision;
}

/** What `reflex alerts` and the dashboard show. */
export interface AlertsView {
  firing: Alert[];
  groups: PendingGroup[];
}

/**
 * Reads what the notifier holds, for `reflex alerts` and the dashboard: the firing alerts (the
 * `active` index, pruned of alerts that expired) and the pending groups.
 */
export class AlertBoard {
  constructor(
    private readonly redis: RedisConnection,
    private readonly keys: NotifyKeys,
  ) {}

  /** Firing alerts, in the order they started. */
  async firing(): Promise<Alert[]> {
    const fps = await this.redis.zrange(this.keys.active, '0', '-1');
    if (!fps.length) return [];
    const raw = await this.redis.mget(...fps.map((fp) => this.keys.alert(fp)));
    const out: Alert[] = [];
    const gone: string[] = [];
    raw.forEach((json, i) => {
      const parsed = json ? alertSchema.safeParse(JSON.parse(json)) : undefined;
      if (parsed?.success && parsed.data.status === 'firing') out.push(parsed.data);
      else gone.push(fps[i]!);
    });
    if (gone.length) await this.redis.zrem(this.keys.active, ...gone);
    return out;
  }

  /** The firing alerts and the pending groups. */
  async view(mute: AlertMute, now = Date.now()): Promise<AlertsView> {
    const [firing, groups] = await Promise.all([this.firing(), this.pendingGroups(mute, now)]);
    return { firing, groups };
  }

  /** Every group holding alerts, with the message its next flush would send, next flush first. */
  async pendingGroups(mute: AlertMute, now = Date.now()): Promise<PendingGroup[]> {
    const entries = await this.redis.hgetall(this.keys.groups);
    const groups: PendingGroup[] = [];
    for (const [groupKey, json] of Object.entries(entries)) {
      const parsed = flushJobSchema.safeParse(JSON.parse(json));
      if (!parsed.success) continue;
      const g = parsed.data;
      const state = await readGroupState(this.redis, this.keys, groupKey);
      if (!state.alerts.length) continue;
      const all = state.alerts.map((a) => a.alert);
      const muted = await mute(all);
      const at = state.scheduled?.at ?? now;
      groups.push({
        groupKey,
        receiver: g.route.receiver,
        route: g.route.id,
        groupLabels: g.groupLabels,
        ...(state.scheduled ? { nextFlushAt: new Date(state.scheduled.at).toISOString() } : {}),
        ...(state.lastSent ? { lastSentAt: new Date(state.lastSent).toISOString() } : {}),
        alerts: all.map((alert) => ({
          alert,
          ...(muted.has(alert.fingerprint) ? { muted: muted.get(alert.fingerprint) } : {}),
          ...(state.notified[alert.fingerprint] ? { notified: notifiedStatus(state.notified[alert.fingerprint]!) } : {}),
        })),
        next: decideFlush(
          all.filter((a) => !muted.has(a.fingerprint)),
          state,
          { sendResolved: g.sendResolved, repeatIntervalMs: g.route.repeatIntervalMs, now: Math.max(at, now) },
        ),
      });
    }
    return groups.sort((a, b) => (a.nextFlushAt ?? '~').localeCompare(b.nextFlushAt ?? '~'));
  }
}

/**
 * The mute decision of flushes: inhibition by the alerts firing now, then the silences that mute
 * notifications. First reason wins.
 */
export function alertMute(board: AlertBoard, inhibitor: Inhibitor, silences: Pick<Silences, 'mutingNotifications'>): AlertMute {
  return async (alerts) => {
    const out = inhibitor.inhibited(alerts, await board.firing());
    for (const [fp, why] of await silences.mutingNotifications(alerts.filter((a) => !out.has(a.fingerprint)))) out.set(fp, why);
    return out;
  };
}
