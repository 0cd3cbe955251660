import { Cluster } from 'ioredis';
import { ReflexError } from '../errors/reflex-error.js';
import type { RedisConnection } from './connect.js';
import { keySpace } from './key-space.js';
import { scanKeys } from './scan-keys.js';

/**
 * The move from the key layout before Redis Cluster hash tags (`P:audit`, `P:bull:events:*`,
 * `P:state:T`, `P:restarts:T:project/name`…) to the one in key-space.ts (`{P:audit}`,
 * `{P:bull}:events:*`, `{P:T}:state`, `{P:T:project/name}:restarts`…). A deployment upgraded
 * without it would start on empty keys and leave its pending events, audit chain, quarantines and
 * budgets behind, so `reflex run` refuses to start while old keys exist and `reflex migrate-keys`
 * renames them.
 */

/** Families keyed by target in the old layout: `P:FAMILY:T[:…]` → `{P:T}:FAMILY[:…]`. */
const targetFamilies = ['state', 'members', 'lease', 'storm-failures', 'storm-remediated', 'storm', 'storms'];
/** Families keyed by instance: `P:FAMILY[:ARGS]:T:project/name[:…]` → `{P:T:project/name}:FAMILY[:ARGS][:…]`. */
const instanceFamilies = ['lock', 'restarts', 'quarantine', 'cooldown', 'standback', 'own-ops', 'pending', 'snapshot-ledger', 'schedule-seen', 'schedule-alerted'];
/** Families whose old names are their new ones (no tag): they stay. */
const unchanged = ['inflight', 'done', 'silences', 'replicas', 'schedule-sync', 'schedule-running', 'schedule-done'];

/** Keys whose presence shows a deployment still on the old layout (any of them). */
function markers(prefix: string): string[] {
  return [`${prefix}:audit`, `${prefix}:bull:events:meta`, `${prefix}:bull:actions:meta`, `${prefix}:archive`];
}

/** Which of the old layout's marker keys exist (empty: nothing to migrate). One EXISTS each, so it works on a Cluster too. */
export async function oldLayoutMarkers(redis: RedisConnection, prefix: string): Promise<string[]> {
  const found = await Promise.all(markers(prefix).map(async (k) => ((await redis.exists(k)) === 1 ? k : undefined)));
  return found.filter((k): k is string => k !== undefined);
}

/** Refuses to go on while old-layout keys exist (KEY_LAYOUT_OUTDATED), saying how to migrate. */
export async function assertCurrentKeyLayout(redis: RedisConnection, prefix: string): Promise<void> {
  const found = await oldLayoutMarkers(redis, prefix);
  if (found.length === 0) return;
  throw new ReflexError(
    'KEY_LAYOUT_OUTDATED',
    `Redis holds keys of the layout before this version (${found.join(', ')}): starting would leave their queued events, audit chain, quarantines and budgets behind. Stop every Reflex process, run \`reflex migrate-keys --prefix ${prefix}\` (add --dry-run to see the renames first), then start again`,
  );
}

/**
 * The new name of an old-layout key, or undefined when it keeps its name (or is not Reflex's).
 * `targets` are the configured target ids: a target URL holds colons, so it is found by name.
 */
export function newKeyName(prefix: string, key: string, targets: readonly string[]): string | undefined {
  if (!key.startsWith(`${prefix}:`)) return undefined;
  const ks = keySpace(prefix);
  const rest = key.slice(prefix.length + 1);
  const family = rest.split(':', 1)[0]!;
  for (const [name, tagged] of [['bull', ks.bullPrefix], ['audit', ks.audit], ['archive', ks.archive], ['rejected', ks.rejected]] as const) {
    if (rest === name || rest.startsWith(`${name}:`)) return `${tagged}${rest.slice(name.length)}`;
  }
  if (rest.startsWith('notify:bull:')) return `${ks.notify.bullPrefix}${rest.slice('notify:bull'.length)}`;
  if (family === 'notify') return `${ks.notify.groups.slice(0, -':groups'.length)}${rest.slice('notify'.length)}`;
  if (unchanged.includes(family)) return undefined;
  // Longest first, so a target that is a prefix of another never takes its keys.
  for (const target of [...targets].sort((a, b) => b.length - a.length)) {
    const at = rest.indexOf(`:${target}`);
    if (at < 0) continue;
    const head = rest.slice(0, at);
    const tail = rest.slice(at + target.length + 1);
    if (targetFamilies.includes(family) && head === family && (tail === '' || tail.startsWith(':'))) {
      return `${ks.state(target).slice(0, -':state'.length)}:${family}${tail}`;
    }
    const m = /^:([^:/]+)\/([^:/]+)(:.*)?$/.exec(tail);
    if (instanceFamilies.includes(family) && m) {
      const ref = { target, project: m[1]!, instance: m[2]! };
      return `${ks.instanceLock(ref).slice(0, -':lock'.length)}:${head}${m[3] ?? ''}`;
    }
  }
  return undefined;
}

/** What {@link migrateKeyLayout} did (or would do, with `dryRun`). */
export interface KeyLayoutMigration {
  /** Old name → new name, renamed (or to rename). */
  renamed: [string, string][];
  /** Old keys left where they are because the new name is taken already (a version with the new layout ran). */
  conflicts: [string, string][];
  /** Old keys of Reflex families the configured targets do not explain (another target's, most likely). */
  unknown: string[];
}

/**
 * Renames every old-layout key under `prefix` to its new name (RENAMENX: a key whose new name is
 * taken is left and reported). Run it with every Reflex process stopped: a worker writing old
 * names meanwhile would leave keys behind. A single Redis or Sentinel only (old-layout keys never
 * ran on a Cluster, and RENAME cannot move a key between slots).
 */
export async function migrateKeyLayout(redis: RedisConnection, prefix: string, targets: readonly string[], opts: { dryRun?: boolean } = {}): Promise<KeyLayoutMigration> {
  if (redis instanceof Cluster) throw new ReflexError('CONFIG_INVALID', 'migrate-keys runs on the single Redis or Sentinel master the old version used, not on a Redis Cluster (move the data after migrating)');
  const out: KeyLayoutMigration = { renamed: [], conflicts: [], unknown: [] };
  const pattern = `${prefix.replace(/[*?[\]\\]/g, '\\$&')}:*`;
  const keys: string[] = [];
  for await (const k of scanKeys(redis, pattern)) keys.push(k);
  for (const key of keys.sort()) {
    const to = newKeyName(prefix, key, targets);
    if (to === undefined) {
      const family = key.slice(prefix.length + 1).split(':', 1)[0]!;
      if (!unchanged.includes(family)) out.unknown.push(key);
      continue;
    }
    if (opts.dryRun) {
      if ((await redis.exists(to)) === 1) out.conflicts.push([key, to]);
      else out.renamed.push([key, to]);
      continue;
    }
    try {
      if ((await redis.renamenx(key, to)) === 1) out.renamed.push([key, to]);
      else out.conflicts.push([key, to]);
    } catch (err) {
      // Expired since the scan (a lock, a cooldown): nothing left to move.
      if (!/no such key/i.test((err as Error).message)) throw err;
    }
  }
  return out;
}
