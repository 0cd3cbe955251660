import type { Notification } from './notification.js';
import type { OutgoingRequest } from './outgoing-request.js';
import { idempotencyKeyHeader } from './idempotency.js';
import { signWebhook, webhookHeaders } from './webhook-signature.js';

/**
 * The default generic webhook body: version `1`, the notification id, receiver, status, group
 * key and labels, whether it is a repeat, and the alerts as stored (see alert.ts).
 */
export function webhookPayload(n: Notification): Record<string, unknown> {
  return {
    version: '1',
    id: n.id,
    receiver: n.receiver,
    status: n.status,
    groupKey: n.groupKey,
    groupLabels: n.groupLabels,
    repeat: n.repeat,
    alerts: n.alerts,
  };
}

/**
 * The signed request (Standard Webhooks): `webhook-id` (and `Idempotency-Key`) is the notification
 * id, the same on every retry and replica, so a receiver drops duplicates by it; the body is the
 * same bytes on every attempt; each attempt is signed anew with its own `webhook-timestamp`, so a
 * retry hours later is still within a receiver's replay window. `headers` are the receiver's extra
 * and auth headers.
 */
export function webhookRequest(
  headers: Record<string, string>,
  keys: readonly Buffer[],
  payload: unknown,
  n: Notification,
  now: Date,
): OutgoingRequest {
  const body = JSON.stringify(payload);
  const ts = Math.floor(now.getTime() / 1000);
  return {
    headers: {
      ...headers,
      'content-type': 'application/json',
      ...idempotencyKeyHeader(n.id),
      [webhookHeaders.id]: n.id,
      [webhookHeaders.timestamp]: String(ts),
      [webhookHeaders.signature]: signWebhook(keys, n.id, ts, body),
    },
    body,
  };
}
