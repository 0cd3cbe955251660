import { z } from 'zod';
import { alertSchema, type Alert } from '../alerts/alert.js';

/**
 * One message to one receiver, as carried by a delivery job: the alerts of a group that changed
 * (or are due for a repeat). `id` is the message's dedupe key, the same on every replica and
 * every retry.
 */
export const notificationSchema = z.object({
  id: z.string(),
  receiver: z.string(),
  groupKey: z.string(),
  /** The values of the route's group_by keys, shared by all alerts of the group. */
  groupLabels: z.record(z.string(), z.string()),
  /** `firing` while any alert in it fires; `resolved` when all have cleared. */
  status: z.enum(['firing', 'resolved']),
  alerts: z.array(alertSchema),
  /** True when this repeats an unchanged group (repeat interval). */
  repeat: z.boolean(),
});
export type Notification = z.infer<typeof notificationSchema>;

export function firingAlerts(n: Notification): Alert[] {
  return n.alerts.filter((a) => a.status === 'firing');
}

export function resolvedAlerts(n: Notification): Alert[] {
  return n.alerts.filter((a) => a.status === 'resolved');
}
