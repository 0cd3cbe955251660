import { AuditLog } from '../src/audit/audit-log.js';
import { eventsIdle, optedInName, type BenchStack } from './stack.js';

/** What the storm needs of a stack: its simulator and probe, its Redis, keys and events queue (Reflex may run in other processes). */
export type StormStack = Pick<BenchStack, 'sim' | 'probe' | 'redis' | 'keys' | 'eventsQueue'>;
import { sleep, until } from '../test/support/wait.js';

/**
 * The storm of the storm benches (bench/storm.ts, bench/storm-replicas.ts): `matching` crashes of
 * opted-in instances among `total - matching` instance-updated events, emitted at once, timed
 * from the emission to the last storm event processed, then checked for losses.
 */

/**
 * Times the storm from its emission to the moment its last event was processed (typed, settled,
 * archived, audited, rules decided, actions queued): that moment is read back from the archive,
 * whose stream ids are Redis' clock at the append. The 1k restarts the storm triggers run on in
 * the action worker and are checked by lostEvents(), but their execution is not part of the figure.
 */
export async function timeStorm(stack: StormStack, total: number, matching: number): Promise<{ seconds: number; jobs: number }> {
  const archivedBefore = await stack.redis.xlen(stack.keys.archive);
  const startedAt = Date.now();
  for (let i = 1; i <= matching; i++) stack.sim.controls.crash(optedInName(i));
  stack.sim.controls.storm(total - matching);
  let last = 0;
  let stormEvents = 0;
  let archived = 0;
  await until(
    'the storm to be processed',
    async () => {
      archived = (await stack.redis.xlen(stack.keys.archive)) - archivedBefore;
      if (archived < total) return false;
      ({ last, count: stormEvents } = await lastStormEvent(stack, startedAt));
      return stormEvents >= total;
    },
    180_000,
    50,
  );
  await eventsIdle(stack.eventsQueue, 60_000);
  archived = (await stack.redis.xlen(stack.keys.archive)) - archivedBefore;
  return { seconds: (last - startedAt) / 1000, jobs: archived };
}

/** The storm's events in the archive (instance-updated lifecycle events, crashes to Stopped) and the time the last one was appended. */
async function lastStormEvent(stack: StormStack, since: number): Promise<{ last: number; count: number }> {
  let last = 0;
  let count = 0;
  for (const [id, fields] of await stack.redis.xrange(stack.keys.archive, String(since), '+')) {
    const event = JSON.parse(fields[fields.indexOf('event') + 1] ?? '{}') as { kind?: string; action?: string; to?: number };
    if ((event.kind === 'lifecycle' && event.action === 'instance-updated') || (event.kind === 'instance.status' && event.to === 102)) {
      count++;
      last = Math.max(last, Number(id.split('-')[0]));
    }
  }
  return { last, count };
}

/** What the storm lost: updates not audited, crashes not decided, instances not started (and started twice). */
export async function lostEvents(stack: StormStack, total: number, matching: number): Promise<{ count: number; summary: string }> {
  await until('a start for every crash', () => stack.probe.calls.size >= matching, 60_000, 100);
  await sleep(500);
  const audit = new AuditLog(stack.redis, stack.keys.audit);
  let updates = 0;
  const decided = new Set<string>();
  for await (const r of audit.records()) {
    if (r.type === 'event' && r.summary.startsWith('instance-updated ')) updates++;
    if (r.type === 'decision' && (r as { matched?: boolean }).matched && r.instance) decided.add(r.instance);
  }
  let starts = 0;
  let doubles = 0;
  for (let i = 1; i <= matching; i++) {
    const n = stack.probe.calls.get(`start ${optedInName(i)}`)?.length ?? 0;
    starts += Math.min(n, 1);
    if (n > 1) doubles++;
  }
  const count = total - matching - updates + (matching - decided.size) + (matching - starts);
  return {
    count,
    summary: `${updates}/${total - matching} updates audited, ${decided.size}/${matching} crashes matched, ${starts}/${matching} instances started (${doubles} started twice)`,
  };
}
