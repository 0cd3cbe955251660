import { startRedisCluster } from '../test/support/redis-topology.js';
import { benchRedis, settled, startBenchStack } from './stack.js';
import { lostEvents, timeStorm } from './storm-measure.js';
import { progress, runBench, type Figure } from './support.js';

/**
 * The ingest path on a real 6-node Redis Cluster (3 masters, 3 replicas, AOF on) against a single
 * Redis (AOF on), same run, same storm: `total` mixed events of which a tenth are crashes of
 * opted-in instances, through an in-process Reflex (all roles), timed from the emission to the
 * last storm event processed (bench/storm-measure.ts). Reported, no goal: the figure tells what a
 * cluster costs (or gains) per event.
 */
const bench = 'redis-cluster';
const total = Number(process.env.BENCH_CLUSTER_EVENTS) || 5_000;
const matching = total / 10;

async function eventsPerSecond(label: string, url: string): Promise<{ rate: number; lost: string; lostCount: number }> {
  const stack = await startBenchStack(url, { optedIn: matching });
  try {
    await settled(stack, matching);
    const { seconds } = await timeStorm(stack, total, matching);
    const lost = await lostEvents(stack, total, matching);
    progress(bench, `${label}: ${total} events in ${seconds.toFixed(2)} s (${Math.round(total / seconds)} events/s); ${lost.summary}`);
    return { rate: total / seconds, lost: lost.summary, lostCount: lost.count };
  } finally {
    await stack.stop();
  }
}

await runBench(bench, async () => {
  const single = await benchRedis();
  let onSingle;
  try {
    onSingle = await eventsPerSecond('single Redis', single.url);
  } finally {
    await single.stop();
  }
  const cluster = await startRedisCluster();
  let onCluster;
  try {
    onCluster = await eventsPerSecond('Redis Cluster', cluster.url);
  } finally {
    await cluster.stop();
  }
  const figure: Figure = {
    name: `storm on a 6-node Redis Cluster: ${total} mixed events, ${matching} matching — ingest+evaluate+audit`,
    unit: 'events/s',
    value: onCluster.rate,
    baselineName: 'the same storm on a single Redis',
    baseline: onSingle.rate,
    ratio: onCluster.rate / onSingle.rate,
    goal: 'reported',
    met: true,
  };
  return {
    bench,
    figures: [figure],
    notes: [
      `Redis Cluster: 3 masters + 3 replicas (redis-server --cluster-enabled yes, AOF on) on this machine's loopback, so the cluster's nodes share its CPUs with Reflex and the simulator; the single Redis is one redis-server with AOF on. Reflex all roles in-process, storm control off.`,
      `Lost on the single Redis: ${onSingle.lost}. On the cluster: ${onCluster.lost}.`,
    ],
    ...(onSingle.lostCount + onCluster.lostCount ? { lost: onSingle.lostCount + onCluster.lostCount } : {}),
  };
});
