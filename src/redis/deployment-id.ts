import { randomUUID } from 'node:crypto';
import { withDeadline, type RedisConnection } from './connect.js';
import { LuaScript } from './script.js';

// The id the key holds, set to ARGV[1] first when it holds none. KEYS: the deployment key.
const claimScript = new LuaScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX') then return ARGV[1] end
return redis.call('GET', KEYS[1])`);

/**
 * Which deployment a Reflex belongs to: a random id kept in its Redis under its prefix
 * (`<prefix>:deployment`), set by the first replica and the same for every replica after it. Served
 * in /readyz, so `reflex doctor` can tell the HTTP endpoint of its own deployment (the same Redis and
 * prefix) from another's on the same address: only a process reading that very key serves that id.
 */
export class DeploymentId {
  private last: string | undefined;

  constructor(
    private readonly redis: RedisConnection,
    private readonly key: string,
  ) {}

  /**
   * The id, set first when the key holds none (a new deployment, a flushed Redis). When Redis does
   * not answer within `timeoutMs`, or refuses the write, the id last read: it names the deployment
   * this process belongs to until Redis says otherwise.
   */
  async claim(timeoutMs = 1_000): Promise<string | undefined> {
    try {
      this.last = String(await withDeadline(claimScript.run(this.redis, [this.key], [randomUUID()]), timeoutMs));
    } catch {
      // Readiness says what is wrong with Redis; the id stays the one last read.
    }
    return this.last;
  }

  /** The id as Redis holds it now, without setting one: undefined when no Reflex ever ran on this Redis and prefix. */
  async read(): Promise<string | undefined> {
    return (await this.redis.get(this.key)) ?? undefined;
  }
}
