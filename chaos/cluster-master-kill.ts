import { startRedisCluster } from '../test/support/redis-topology.js';
import { keySpace, type ChaosOptions, type ScenarioResult } from './support.js';
import { stormWithKill } from './storm-with-kill.js';

/**
 * On a real 6-node Redis Cluster (3 masters, 3 replicas), a storm of events with crashes of
 * opted-in instances through one subscriber and two worker processes; mid-storm the master that
 * holds the queues' slot (`{<prefix>:bull}`) is SIGKILLed and its replica takes over. Nothing may
 * be lost, no instance started twice, every crash healed.
 */
export async function clusterMasterKill(opts: ChaosOptions): Promise<ScenarioResult> {
  const cluster = await startRedisCluster();
  let queuesTag = '';
  let victim = 0;
  let killedAt = 0;
  try {
    return await stormWithKill(opts, {
      url: cluster.url,
      label: 'cluster',
      async before(prefix) {
        const keys = keySpace(prefix);
        queuesTag = keys.bullPrefix;
        victim = await cluster.masterOf(queuesTag);
        return `on a 6-node Redis Cluster, the queues' slot (${queuesTag}) is on the master at port ${victim}, the audit trail's on ${await cluster.masterOf(keys.audit)}`;
      },
      async kill() {
        killedAt = Date.now();
        cluster.kill(victim);
        return `SIGKILLed the master holding ${queuesTag} (port ${victim})`;
      },
      async recovered() {
        const port = await cluster.waitForPromotion(victim, queuesTag, 60_000);
        return `its replica (port ${port}) served the slot ${Date.now() - killedAt} ms after the kill`;
      },
    });
  } finally {
    await cluster.stop();
  }
}
