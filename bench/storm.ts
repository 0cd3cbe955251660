import { AuditLog } from '../src/audit/audit-log.js';
import { bullmqAddProcess } from './baseline-bullmq.js';
import { benchRedis, optedInName, settled, startStack, type Stack } from './stack.js';
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
          `Storm: ${total - matching} instance-updated + ${matching} crashes of opted-in instances, emitted at once. Reflex's time runs from the first event to the events queue drained, and includes the ${jobs - total} follow-on events (operations, instance-started) of the ${matching} restarts it triggered.`,
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

/** Times the storm from the first emitted event to the last one archived (every event is, once processed). */
async function timeStorm(stack: Stack): Promise<{ seconds: number; jobs: number }> {
  const doneBefore = await stack.redis.xlen(stack.keys.archive);
  const started = performance.now();
  for (let i = 1; i <= matching; i++) stack.sim.controls.crash(optedInName(i));
  stack.sim.controls.storm(total - matching);
  let ended = 0;
  let jobs = 0;
  await until('the storm to be processed', async () => {
    const c = (await stack.eventsQueue.getJobCounts('waiting', 'active', 'prioritized', 'delayed')) as Record<string, number>;
    const busy = (c.waiting ?? 0) + (c.active ?? 0) + (c.prioritized ?? 0) + (c.delayed ?? 0);
    jobs = (await stack.redis.xlen(stack.keys.archive)) - doneBefore;
    if (busy === 0 && jobs >= total) {
      ended ||= performance.now();
      // Quiet for a while: the restarts' follow-on events have been processed too.
      return performance.now() - ended > 300;
    }
    ended = 0;
    return false;
  }, 180_000, 25);
  return { seconds: (ended - started) / 1000, jobs };
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
