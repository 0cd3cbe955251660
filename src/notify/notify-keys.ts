/**
 * The Redis keys and BullMQ queues of notifications, declared once, under `${prefix}:notify:`.
 * Group keys are hashes, so they are safe in key names and job ids.
 */
export interface NotifyKeys {
  /** BullMQ prefix of the notification queues. */
  bullPrefix: string;
  /** Queue of group flushes: one delayed job per group decides what to send when its wait is over. */
  flushQueue: string;
  /** Queue of deliveries: one job per message to one receiver, retried with backoff. */
  deliveryQueue: string;
  /** Hash fingerprint → alert JSON: the alerts of a group. */
  group(groupKey: string): string;
  /** Hash fingerprint → `firing`: the alerts of a group a firing message was sent for. */
  notified(groupKey: string): string;
  /** Set while a flush of the group is scheduled, so replicas schedule one between them. */
  scheduled(groupKey: string): string;
  /** Time (ms) of the group's last message, for repeat_interval. */
  lastSent(groupKey: string): string;
  /** JSON of an alert's latest version and the groups it is in, for `resolve(fingerprint)`. */
  alert(fingerprint: string): string;
  /** Lock held while one alert is read and changed (raise, amend, resolve). */
  alertLock(fingerprint: string): string;
  /** JSON of a recovery seen while Reflex's own actions on the incident were still finishing (instance alerts). */
  recovered(fingerprint: string): string;
  /** Set (NX) by whoever enqueues a message, so the same message is sent once across replicas. */
  sent(notificationId: string): string;
  /** Counter of a receiver's messages in one rate-limit window. */
  rate(receiver: string, window: number): string;
}

export function notifyKeys(prefix = 'reflex'): NotifyKeys {
  const p = `${prefix}:notify`;
  return {
    bullPrefix: `${p}:bull`,
    flushQueue: 'flush',
    deliveryQueue: 'deliveries',
    group: (g) => `${p}:group:${g}`,
    notified: (g) => `${p}:notified:${g}`,
    scheduled: (g) => `${p}:scheduled:${g}`,
    lastSent: (g) => `${p}:last-sent:${g}`,
    alert: (fp) => `${p}:alert:${fp}`,
    alertLock: (fp) => `${p}:alert-lock:${fp}`,
    recovered: (fp) => `${p}:recovered:${fp}`,
    sent: (id) => `${p}:sent:${id}`,
    rate: (r, w) => `${p}:rate:${r}:${w}`,
  };
}
