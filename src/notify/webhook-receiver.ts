import type { Notification } from './notification.js';
import type { OutgoingRequest } from './outgoing-request.js';
import type { WebhookConfig } from './receiver-config.js';
import type { Secret } from './secret.js';
import { signatureHeader, signWebhook, timestampHeader } from './webhook-signature.js';

/** Header naming the notification, the same on every retry, so a receiver can drop duplicates. */
const deliveryHeader = 'X-Reflex-Delivery';

/**
 * The default generic webhook body: version `1`, the notification id, receiver, status, group
 * key and labels, whether it is a repeat, and the alerts as stored (see alert.ts).
 */
export function webhookPayload(n: Notification): Record<string, unknown> {
  return { version: '1', id: n.id, receiver: n.receiver, status: n.status, groupKey: n.groupKey, groupLabels: n.groupLabels, repeat: n.repeat, alerts: n.alerts };
}

/** The signed request: the body is signed as sent, with the time of this attempt. */
export function webhookRequest(cfg: WebhookConfig, secret: Secret, payload: unknown, n: Notification, now: Date): OutgoingRequest {
  const body = JSON.stringify(payload);
  const ts = Math.floor(now.getTime() / 1000);
  return {
    headers: {
      ...cfg.headers,
      'content-type': 'application/json',
      [deliveryHeader]: n.id,
      [timestampHeader]: String(ts),
      [signatureHeader]: signWebhook(secret.reveal(), ts, body),
    },
    body,
  };
}
