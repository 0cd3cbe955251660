import { expect } from 'vitest';

/**
 * What a cluster move (`lxc move NAME --target MEMBER`, POST /1.0/instances/NAME?target=) shows on
 * the operation stream, as LXD 5.0.2 runs it between members without shared storage. The same
 * assertion holds the simulator's cluster mode (test/simulator/cluster-mode.test.ts) and the real
 * two-member cluster (test/lxd/lxd-cluster.test.ts) to it.
 */

/** An operation event as both stream it (the event envelope of seed §5). */
export interface OperationFrame {
  location?: string;
  metadata: { id: string; description: string; class: string; status: string; resources?: Record<string, string[]> | null };
}

/** The operations that ended, in the order they ended: [description, class, member, first instance URL]. */
export function endedOperations(frames: OperationFrame[]): [string, string, string | undefined, string | undefined][] {
  return frames
    .filter((f) => f.metadata.status === 'Success' || f.metadata.status === 'Failure')
    .map((f) => [f.metadata.description, f.metadata.class, f.location, f.metadata.resources?.instances?.[0]?.replace(/\?.*$/, '')]);
}

/**
 * Asserts the move's operations, as they end: the copy `copy` created on the target, the instance
 * deleted on the old member, the copy renamed on the target, and the asked-for "Migrating
 * instance" task last (each waits for the one before: a causal chain); the migration source's
 * websocket on the old member ends somewhere before the task (it closes when the transfer does,
 * racing the chain's other steps).
 */
export function expectMoveOperations(frames: OperationFrame[], m: { name: string; copy: string; from: string; to: string }): void {
  const ended = endedOperations(frames).filter(([description]) => /^(Migrating|Creating|Deleting|Renaming) instance$/.test(description));
  // One member's events reach the stream read through another after a relay: the order holds
  // within each member, not across them (a clean-clone CI run saw the old member's "Migrating"
  // end read before the target's "Renaming").
  const tasks = ended.filter(([, kind]) => kind === 'task');
  const on = (member: string) => tasks.filter(([, , location]) => location === member);
  expect(on(m.to)).toEqual([
    ['Creating instance', 'task', m.to, `/1.0/instances/${m.copy}`],
    ['Renaming instance', 'task', m.to, `/1.0/instances/${m.copy}`],
  ]);
  expect(on(m.from)).toEqual([
    ['Deleting instance', 'task', m.from, `/1.0/instances/${m.name}`],
    ['Migrating instance', 'task', m.from, `/1.0/instances/${m.name}`],
  ]);
  expect(tasks).toHaveLength(4);
  const websocket = ended.filter(([, kind]) => kind === 'websocket');
  expect(websocket).toEqual([['Migrating instance', 'websocket', m.from, `/1.0/instances/${m.name}`]]);
  expect(ended.indexOf(websocket[0]!)).toBeLessThan(ended.length - 1);
}
