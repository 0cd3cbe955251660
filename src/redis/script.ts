import { createHash } from 'node:crypto';
import type { RedisConnection } from './connect.js';

/**
 * A Lua script run by its SHA-1 (EVALSHA), so the hot paths (archive, state, audit, locks) send
 * a 40-byte digest instead of the script's text on every call; a server that has not seen the
 * script yet (new, restarted, flushed) answers NOSCRIPT and gets it once with EVAL. On a Redis
 * Cluster both route by the first key to the node owning its slot, so the fallback loads the script
 * on that node (each master learns it on first use); all keys of one call must share a slot.
 */
export class LuaScript {
  private readonly sha: string;

  constructor(private readonly lua: string) {
    this.sha = createHash('sha1').update(lua).digest('hex');
  }

  async run(redis: RedisConnection, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (!String((err as Error).message).startsWith('NOSCRIPT')) throw err;
      return redis.eval(this.lua, keys.length, ...keys, ...args);
    }
  }
}
