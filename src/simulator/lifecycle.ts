import type { ApiRevision } from '../client/status-code.js';
import type { EventHub } from './event-hub.js';
import type { SimInstance } from './instance-model.js';

/** Who asked: `{username, protocol, address}` in LXD's order (notes §2). */
export interface Requestor {
  username: string;
  /** `cluster`: one member asking another on the cluster's behalf (evacuation, restore). */
  protocol: 'unix' | 'tls' | 'cluster';
  address: string;
}

/** The requestor of every unix-socket call: root, like LXD run as root. */
export const unixRequestor: Requestor = { username: 'root', protocol: 'unix', address: '@' };

/** Optional parts of a lifecycle event. */
export interface LifecycleExtra {
  /** Overrides the source URL (snapshots). */
  source?: string;
  context?: Record<string, unknown>;
  /** Present only for API-initiated actions; absent for crashes and other guest/host-initiated events. */
  requestor?: Requestor | undefined;
  /** Sends the event as another instance name (a move's temporary copy). */
  name?: string;
  /** Sends the event from another member than the instance's (a move's source). */
  location?: string;
}

/**
 * Emits lifecycle events. On the earlier revision the metadata holds only action, source, context
 * and requestor (LXD 5.0.2); the later one adds name and project (`event_lifecycle_name_and_project`).
 */
export class LifecycleEmitter {
  constructor(
    private readonly hub: EventHub,
    private readonly revision: ApiRevision,
  ) {}

  /** Emits `action` for an instance. */
  emit(inst: SimInstance, action: string, extra: LifecycleExtra = {}): void {
    const name = extra.name ?? inst.name;
    const metadata: Record<string, unknown> = { action, source: extra.source ?? inst.url().replace(`/${inst.name}`, `/${name}`) };
    if (extra.context) metadata.context = extra.context;
    if (extra.requestor) metadata.requestor = extra.requestor;
    if (this.revision === 'later') {
      metadata.name = name;
      metadata.project = inst.project;
    }
    this.hub.publish('lifecycle', metadata, inst.project, extra.location ?? inst.location);
  }
}
