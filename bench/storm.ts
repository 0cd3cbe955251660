import { bullmqAddProcess } from './baseline-bullmq.js';
import { benchRedis, settled, startBenchStack } from './stack.js';
import { lostEvents, timeStorm } from './storm-measure.js';
import { atLeast, progress, runBench } from './support.js';

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
    const stack = await startBenchStack(redis.url, { optedIn: matching });
    try {
      await settled(stack, matching);
      const { seconds, jobs } = await timeStorm(stack, total, matching);
      const rate = total / seconds;
      progress(bench, `Reflex: ${total} events in ${seconds.toFixed(2)} s (${Math.round(rate)} events/s, ${jobs} events archived in all)`);
      const lost = await lostEvents(stack, total, matching);
      progress(bench, `lost: ${lost.summary}`);
      return {
        bench,
        figures: [
          atLeast(
            `storm: ${total} mixed events, ${matching} matching — ingest+evaluate+audit`,
            'events/s',
            rate,
            `raw BullMQ add+process of ${total} empty jobs`,
            baseline,
            2,
          ),
        ],
        notes: [
          `Storm: ${total - matching} instance-updated + ${matching} crashes of opted-in instances, emitted at once. Reflex's time runs from the emission to the last storm event processed (archived, audited, decided, its start queued), read from the archive's stream ids; the ${matching} restarts run on in the action worker (${jobs - total} follow-on events) and are counted below, not timed. Storm control is off here: with it, ${matching} crashes on one server would be one grouped alert and no restarts.`,
          `Zero lost: ${lost.summary}.`,
          'How: the ingestor writes what accumulated during the previous write as one job (up to 500 events), and the event worker handles the instances of a batch side by side (each instance in order), so the Redis round trips of an event (dedupe mark, state compare-and-set, self-action mark, audit appends) overlap, and what the lanes write at the same moment (audit records, archive entries, done marks) goes in one script call or pipeline (group commit). The bare queue costs one add and one completion round trip per job.',
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
