import { AuditLog } from '../src/audit/audit-log.js';
import { bullmqAddProcess } from './baseline-bullmq.js';
import { benchRedis, eventsIdle, optedInName, settled, startStack, type Stack } from './stack.js';
import { atLeast, progress, runBench, sleep, until } from './support.js';

/**
 * A storm of 10k mixed events of which 1k match a rule: 9k `instance-updated` (audited, no rule
 * wants them) and 1k crashes of opted-in instances (`instance-shutdown`, matched by
 * restart-on-crash, gated, audited, start queued). Reflex's ingest + evaluate + audit throughput,
 * storm start to the events queue drained, against raw BullMQ add + process of 10k empty jobs in
 * the same run. Then checks that nothing was lost: 9k updates audited, 1k decisions, 1k starts.
 */
const bench = 'storm';
const total = Number(process.env.BENCH_STORM_EVENTS) || 10_000;
const matching = total / 10;

await runBench(bench, async () => {
  const redis = await benchRedis();
  try {
    const baseline = await bullmqAddProcess(redis.url, total);
    progress(bench, `raw BullMQ add+process: ${Math.round(baseline)} jobs/s`);
    const stack = await startStack(redis.url, { optedIn: matching });
    try {
      await settled(stack, matching);
      const { seconds, jobs } = await timeStorm(stack);
      const rate = total / seconds;
      progress(bench, `Reflex: ${total} events in ${seconds.toFixed(2)} s (${Math.round(rate)} events/s, ${jobs} events archived in all)`);
      const lost = await lostEvents(stack);
      progress(bench, `lost: ${lost.summary}`);
      return {
        bench,
        figures: [atLeast(`storm: ${total} mixed events, ${matching} matching — ingest+evaluate+audit`, 'events/s', rate, `raw BullMQ add+process of ${total} empty jobs`, baseline, 2)],
        notes: [
          `Storm: ${total - matching} instance-updated + ${matching} crashes of opted-in instances, emitted at once. Reflex's time runs from the emission to the last storm event processed (archived, audited, decided, its start queued), read from the archive's stream ids; the ${matching} restarts run on in the action worker (${jobs - total} follow-on events) and are counted below, not timed. Storm control is off here: with it, ${matching} crashes on one server would be one grouped alert and no restarts.`,
          `Zero lost: ${lost.summary}.`,
          'How: the ingestor writes what accumulated during the previous write as one job (up to 500 events), and the event worker handles the instances of a batch side by side (each instance in order), so the Redis round trips of an event (dedupe mark, state compare-and-set, self-action mark, audit appends) overlap. The bare queue costs one add and one completion round trip per job.',
        ],
        ...(lost.count ? { lost: lost.count } : {}),
      };
    } finally {
      await stack.stop();
    }
  } finally {
    await redis.stop();
  }
});

/**
 * Times the storm from its emission to the moment its last event was processed (typed, settled,
 * archived, audited, rules decided, actions queued): that moment is read back from the archive,
 * whose stream ids are Redis' clock at the append. The 1k restarts the storm triggers run on in
 * the action worker and are checked by lostEvents(), but their execution is not part of the figure.
 */
async function timeStorm(stack: Stack): Promise<{ seconds: number; jobs: number }> {
  const archivedBefore = await stack.redis.xlen(stack.keys.archive);
  const startedAt = Date.now();
  for (let i = 1; i <= matching; i++) stack.sim.controls.crash(optedInName(i));
  stack.sim.controls.storm(total - matching);
  let last = 0;
  let stormEvents = 0;
  let archived = 0;
  await until('the storm to be processed', async () => {
    archived = (await stack.redis.xlen(stack.keys.archive)) - archivedBefore;
    if (archived < total) return false;
    ({ last, count: stormEvents } = await lastStormEvent(stack, startedAt));
    return stormEvents >= total;
  }, 180_000, 50);
  await eventsIdle(stack.eventsQueue, 60_000);
  archived = (await stack.redis.xlen(stack.keys.archive)) - archivedBefore;
  return { seconds: (last - startedAt) / 1000, jobs: archived };
}

/** The storm's events in the archive (instance-updated lifecycle events, crashes to Stopped) and the time the last one was appended. */
async function lastStormEvent(stack: Stack, since: number): Promise<{ last: number; count: number }> {
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

async function lostEvents(stack: Stack): Promise<{ count: number; summary: string }> {
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
  const count = (total - matching - updates) + (matching - decided.size) + (matching - starts);
  return { count, summary: `${updates}/${total - matching} updates audited, ${decided.size}/${matching} crashes matched, ${starts}/${matching} instances started (${doubles} started twice)` };
}
