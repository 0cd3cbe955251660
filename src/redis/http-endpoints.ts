import type { RedisConnection } from './connect.js';
import { ReplicaRoster } from './replica-roster.js';

/**
 * Where the replicas of a deployment serve /metrics, /healthz and /readyz: each announces its
 * server's URL in a roster under the deployment's prefix (`<prefix>:http-replicas`), so `reflex
 * doctor` finds its own deployment's /readyz when the address its configuration names is another's
 * or silent. A URL is as the replica bound it (127.0.0.1, 0.0.0.0…): meaningful on its own host.
 */
export class HttpEndpoints {
  private readonly roster: ReplicaRoster;

  constructor(redis: RedisConnection, key: string) {
    this.roster = new ReplicaRoster(redis, key);
  }

  /**
   * Announces `url` now and every `everyMs` (it drops out three periods after the last), until the
   * returned function takes it off. A failed announcement waits for the next period.
   */
  announce(url: string, everyMs = 10_000): () => Promise<void> {
    const beat = () => void this.roster.beat(url, everyMs * 3).catch(() => undefined);
    beat();
    const timer = setInterval(beat, everyMs);
    timer.unref();
    return async () => {
      clearInterval(timer);
      await this.roster.leave(url).catch(() => undefined);
    };
  }

  /** The URLs announced and not run out. */
  live(): Promise<string[]> {
    return this.roster.live();
  }
}
