import type { RedisConnection } from '../src/redis/connect.js';
import { benchRedis, optedInName, settled, startBenchStack } from './stack.js';
import { progress } from './support.js';
import { sleep, until } from '../test/support/wait.js';

/**
 * Redis memory per event of each structure Reflex keeps, on the simulator: opted-in instances
 * crash one after the other and are healed (each crash: a stop, a start, their operations and
 * lifecycle frames), then every key of the stack's prefix is measured with MEMORY USAGE (exact,
 * SAMPLES 0) and grouped by structure. Divided by the events archived, it gives the bytes per event
 * behind the budget table of docs/operations.md (Redis memory budget). Prints a table; not part of
 * `npm run bench` (it measures sizes, not speed): `node --import tsx bench/redis-footprint.ts`.
 */
const bench = 'redis-footprint';
const crashes = Number(process.env.FOOTPRINT_CRASHES) || 200;

const structures: [string, RegExp][] = [
  ['audit stream', /^\{[^}]+:audit\}$/],
  ['audit once-keys', /^\{[^}]+:audit\}:once:/],
  ['archive stream', /^\{[^}]+:archive\}$/],
  ['archive seen-keys', /^\{[^}]+:archive\}:seen:/],
  ['done marks', /:done:/],
  ['events queue jobs', /:bull\}:events:/],
  ['actions queue jobs', /:bull\}:actions:/],
];

async function measure(redis: RedisConnection, prefix: string): Promise<Map<string, { keys: number; bytes: number }>> {
  const out = new Map<string, { keys: number; bytes: number }>();
  let cursor = '0';
  do {
    const [next, keys] = (await redis.scan(cursor, 'MATCH', `*${prefix}*`, 'COUNT', 1000)) as [string, string[]];
    cursor = next;
    for (const key of keys) {
      const name = structures.find(([, re]) => re.test(key))?.[0] ?? 'other';
      const bytes = ((await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', 0)) as number | null) ?? 0;
      const s = out.get(name) ?? { keys: 0, bytes: 0 };
      out.set(name, { keys: s.keys + 1, bytes: s.bytes + bytes });
    }
  } while (cursor !== '0');
  return out;
}

const redis = await benchRedis();
try {
  const stack = await startBenchStack(redis.url, { optedIn: crashes });
  try {
    await settled(stack, crashes);
    const before = await measure(stack.redis, stack.prefix);
    const archivedBefore = await stack.redis.xlen(stack.keys.archive);
    for (let i = 1; i <= crashes; i++) {
      stack.sim.controls.crash(optedInName(i));
      await sleep(20);
    }
    await until('every crashed instance started again', () => stack.probe.calls.size >= crashes, 120_000, 100);
    await sleep(1_000);
    const after = await measure(stack.redis, stack.prefix);
    const events = (await stack.redis.xlen(stack.keys.archive)) - archivedBefore;
    const audits = await stack.redis.xlen(stack.keys.audit);
    progress(bench, `${crashes} crashes healed: ${events} events archived, ${audits} audit records`);
    const lines = [`| structure | keys | bytes | bytes per event |`, `| --- | --- | --- | --- |`];
    for (const [name] of [...structures, ['other', /./] as [string, RegExp]]) {
      const a = after.get(name) ?? { keys: 0, bytes: 0 };
      const b = before.get(name) ?? { keys: 0, bytes: 0 };
      const bytes = a.bytes - b.bytes;
      lines.push(`| ${name} | ${a.keys - b.keys} | ${bytes} | ${(bytes / events).toFixed(0)} |`);
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await stack.stop();
  }
} finally {
  await redis.stop();
}
process.exit(0);
