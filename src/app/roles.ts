import type { Config } from '../config/config.js';
import type { RoleNeeds, RoleRoot } from './role-root.js';
import { startSchedulerRoot } from './scheduler-root.js';
import type { HeldParts, SharedParts } from './shared-parts.js';
import { startSubscriberRoot } from './subscriber-root.js';
import { startWorkerRoot } from './worker-root.js';

/** A role a process may run: what it needs opened beside what every role shares, and its composition root. */
export interface Role extends RoleNeeds {
  start(s: SharedParts, held: HeldParts): Promise<RoleRoot>;
}

const subscriber: Role = { start: startSubscriberRoot };
/** The worker requires rules (one with none would heal nothing) and sends the notifications. */
const worker: Role = { rules: 'required', sends: true, start: startWorkerRoot };
/** The scheduler holds the rules folder's schedules and probes; it may run with none. */
const scheduler: Role = { rules: 'held', start: startSchedulerRoot };

/** The roles of `role`, in the order they start (and stop): `all` runs the three. */
export function rolesOf(role: Config['role']): Role[] {
  return { all: [subscriber, worker, scheduler], subscriber: [subscriber], worker: [worker], scheduler: [scheduler] }[role];
}

/** What the roles need together: the rule set as the most demanding of them needs it, and the notifier if one sends. */
export function needsOf(roles: Role[]): RoleNeeds {
  const rules = roles.find((r) => r.rules === 'required')?.rules ?? roles.find((r) => r.rules)?.rules;
  return { rules, sends: roles.some((r) => r.sends) };
}
