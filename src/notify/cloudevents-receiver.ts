import type { Notification } from './notification.js';
import type { OutgoingRequest } from './outgoing-request.js';
import type { CloudEventsConfig } from './receiver-config.js';
import { webhookPayload } from './webhook-receiver.js';
import { idempotencyKeyHeader } from './idempotency.js';

/** Media type of a CloudEvent in structured content mode with the JSON event format. */
export const cloudEventsContentType = 'application/cloudevents+json; charset=utf-8';

/** The default `data` of the event: the same document the generic webhook posts. */
export const cloudEventData = webhookPayload;

/**
 * One CloudEvent 1.0 in HTTP structured content mode: the whole event (attributes and `data`) is
 * the JSON body. `id` is the notification id and `time` when the message was queued, so every
 * retry posts the same bytes and a receiver drops a duplicate by `source` + `id` (or by the
 * `Idempotency-Key` header, which carries the same id); `type` is `<typePrefix>.firing` or
 * `.resolved`; `subject` is the group key. `headers` are the receiver's extra and auth headers.
 */
export function cloudEventRequest(
  cfg: CloudEventsConfig,
  headers: Record<string, string>,
  data: unknown,
  n: Notification,
  createdAt: Date,
): OutgoingRequest {
  const event = {
    specversion: '1.0',
    id: n.id,
    source: cfg.source,
    type: `${cfg.typePrefix}.${n.status}`,
    subject: n.groupKey,
    time: createdAt.toISOString(),
    datacontenttype: 'application/json',
    data,
  };
  return { headers: { ...headers, 'content-type': cloudEventsContentType, ...idempotencyKeyHeader(n.id) }, body: JSON.stringify(event) };
}
