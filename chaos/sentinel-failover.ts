import { startRedisSentinel } from '../test/support/redis-topology.js';
import type { ChaosOptions, ScenarioResult } from './support.js';
import { stormWithKill } from './storm-with-kill.js';

/**
 * On a real Sentinel set-up (a master, a replica, three sentinels), a storm of events with crashes
 * of opted-in instances through one subscriber and two worker processes; mid-storm the master is
 * SIGKILLed, the sentinels promote the replica, and every Reflex process follows it (ioredis asks
 * the sentinels). Nothing may be lost, no instance started twice, every crash healed.
 */
export async function sentinelFailover(opts: ChaosOptions): Promise<ScenarioResult> {
  const sentinel = await startRedisSentinel();
  let victim = 0;
  let killedAt = 0;
  try {
    return await stormWithKill(opts, {
      url: sentinel.url,
      label: 'sentinel',
      before: async () => `on Redis with Sentinel, master ${sentinel.masterPort}, replica ${sentinel.replicaPort}`,
      async kill() {
        killedAt = Date.now();
        victim = await sentinel.killMaster();
        return `SIGKILLed the master (port ${victim})`;
      },
      async recovered() {
        const port = await sentinel.waitForFailover(victim, 60_000);
        return `the sentinels promoted the replica (port ${port}) ${Date.now() - killedAt} ms after the kill`;
      },
    });
  } finally {
    await sentinel.stop();
  }
}
