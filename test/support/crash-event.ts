import type { InstanceStatusEvent } from '../../src/events/canonical-event.js';

let seq = 0;

/** A crash of `instance` on `target` (an unrequested stop, instance-shutdown) as the ingestor emits it, with an id of its own; `over` on top. */
export function crashEvent(target: string, instance: string, over: Partial<InstanceStatusEvent> = {}): InstanceStatusEvent {
  return {
    kind: 'instance.status',
    id: `crash-${++seq}-${instance}`,
    target,
    location: 'none',
    project: 'default',
    timestamp: new Date().toISOString(),
    synthetic: false,
    instance,
    to: 102,
    intent: 'unrequested',
    action: 'instance-shutdown',
    ...over,
  };
}
