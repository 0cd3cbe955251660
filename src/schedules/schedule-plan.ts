import type { InstanceClient } from '../client/client.js';
import type { Instance } from '../client/instance.js';
import { evaluateFilter } from '../filter/evaluator.js';
import { planInstance, rootPool, snapshotInfos, type InstancePlan } from '../housekeeping/instance-plan.js';
import { poolFreeRatio } from '../housekeeping/pool-space.js';
import type { Schedule } from './schedule.js';

/** The instances in the schedule's scope, each with its project. */
export async function instancesInScope(schedule: Schedule, client: InstanceClient): Promise<(Instance & { project: string })[]> {
  const lists = schedule.projects
    ? await Promise.all(schedule.projects.map(async (p) => (await client.withProject(p).listInstances({ recursion: 1 })).map((i) => ({ ...i, project: i.project ?? p }))))
    : [(await client.listInstances({ allProjects: true, recursion: 1 })).map((i) => ({ ...i, project: i.project ?? 'default' }))];
  const all = lists.flat();
  return schedule.scopeFilter ? all.filter((i) => evaluateFilter(schedule.scopeFilter!, i)) : all;
}

/** Plans one instance: reads its snapshots (and its pool's free space when retention may prune first). */
export async function planFor(schedule: Schedule, client: InstanceClient, inst: Instance & { project: string }, pools: Map<string, Promise<number | undefined>>, tickAt: number, now: () => number): Promise<InstancePlan> {
  const scoped = client.withProject(inst.project);
  const touchesSnapshots = schedule.tasks.some((t) => t.task !== 'delete-stopped');
  const snapshots = touchesSnapshots ? snapshotInfos(await scoped.listSnapshots(inst.name)) : [];
  let pool: { name: string; freeRatio: number } | undefined;
  const poolName = rootPool(inst);
  if (poolName && schedule.tasks.some((t) => t.task === 'retention') && schedule.tasks.some((t) => t.task === 'snapshot')) {
    if (!pools.has(poolName)) pools.set(poolName, poolFreeRatio(client, poolName));
    const free = await pools.get(poolName)!;
    if (free !== undefined) pool = { name: poolName, freeRatio: free };
  }
  return planInstance({ instance: inst, project: inst.project, snapshots, pool }, schedule.tasks, { now: now(), tickAt, tz: schedule.tz });
}
