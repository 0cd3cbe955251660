import type { Instance } from '../client/instance.js';

/**
 * Which instance a name meant at one moment. LXD and Incus give every instance a `volatile.uuid`
 * that a rename (`lxc move a b`) and a move between cluster members keep, and a delete ends: a new
 * instance under the same name gets a new one. `created_at` stands in where a daemon gives no uuid;
 * it is the weaker of the two: LXD 5.0.2 gives the copy a cluster move makes a new `created_at`
 * (seen on the two-member cluster), so it is compared only when either side lacks the uuid.
 * A name alone is not an instance.
 */
export interface InstanceIdentity {
  /** `volatile.uuid` of the instance, when the daemon sets one. */
  uuid?: string;
  /** `created_at` of the instance (daemon time), the fallback. */
  createdAt?: string;
}

/** The identity of an instance as read from the daemon; empty when the read gave neither field. */
export function identityOf(instance: Instance | undefined): InstanceIdentity {
  const uuid = instance?.config['volatile.uuid'];
  const createdAt = typeof instance?.created_at === 'string' && !instance.created_at.startsWith('0001-') ? instance.created_at : undefined;
  return { ...(uuid ? { uuid } : {}), ...(createdAt ? { createdAt } : {}) };
}

/**
 * One string per identity, for Redis (the crash-loop budget and quarantine hold it): the uuid, or
 * `created_at:<time>` without one; empty when nothing is known.
 */
export function identityToken(id: InstanceIdentity | undefined): string {
  if (id?.uuid) return id.uuid;
  return id?.createdAt ? `created_at:${id.createdAt}` : '';
}

/**
 * Whether the instance read now is another one than the one that had the incident. Compared on
 * the uuid when both have one, else on `created_at`; when neither can be compared the answer is
 * no: an unknown identity never blocks a remediation by itself.
 */
export function isAnotherInstance(then: InstanceIdentity | undefined, now: InstanceIdentity): boolean {
  if (then?.uuid && now.uuid) return then.uuid !== now.uuid;
  if (then?.createdAt && now.createdAt) return Date.parse(then.createdAt) !== Date.parse(now.createdAt);
  return false;
}

/** How an identity reads in an audit line. */
export function describeIdentity(id: InstanceIdentity | undefined): string {
  if (id?.uuid) return `volatile.uuid ${id.uuid}`;
  return id?.createdAt ? `created_at ${id.createdAt}` : 'identity unknown';
}
