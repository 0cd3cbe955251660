import type { Notification } from './notification.js';
import type { OutgoingRequest } from './outgoing-request.js';
import type { CloudEventsConfig } from './receiver-config.js';
import { webhookPayload } from './webhook-receiver.js';

/** Media type of a CloudEvent in structured content mode with the JSON event format. */
export const cloudEventsContentType = 'application/cloudevents+json; charset=utf-8';

/** The default `data` of the event: the same document the generic webhook posts. */
export const cloudEventData = webhookPayload;

/**
 * One CloudEvent 1.0 in HTTP structured content mode: the whole event (attributes and `data`) is
 * the JSON body. `id` is the notification id, so a retried delivery is recognisably the same
 * event; `type` is `<typePrefix>.firing` or `.resolved`; `subject` is the group key.
 */
export function cloudEventRequest(cfg: CloudEventsConfig, data: unknown, n: Notification, now: Date): OutgoingRequest {
  const event = {
    specversion: '1.0',
    id: n.id,
    source: cfg.source,
    type: `${cfg.typePrefix}.${n.status}`,
    subject: n.groupKey,
    time: now.toISOString(),
    datacontenttype: 'application/json',
    data,
  };
  return { headers: { 'content-type': cloudEventsContentType }, body: JSON.stringify(event) };
}
