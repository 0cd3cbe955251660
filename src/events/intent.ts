import type { Redis } from 'ioredis';
import type { KeySpace } from '../redis/key-space.js';

/** What Reflex is doing or just did to an instance, so events it causes are recognised as `self`. */
export interface SelfAction {
  action: string;
  state: 'in-flight' | 'done' | 'failed';
  at: number;
  operationId?: string;
}

/** How long after an action its echoes (events, a spurious shutdown after a failed start) count as ours. */
const echoWindowMs = 5_000;

/**
 * Marks instances Reflex is acting on. Shared in Redis, so a replica that did not issue the call
 * still recognises its events.
 */
export class SelfActions {
  constructor(
    private readonly redis: Redis,
    private readonly keys: KeySpace,
  ) {}

  async mark(target: string, instance: string, value: SelfAction): Promise<void> {
    const ttl = value.state === 'in-flight' ? 120_000 : echoWindowMs;
    await this.redis.set(this.keys.selfAction(target, instance), JSON.stringify(value), 'PX', ttl);
  }

  async get(target: string, instance: string): Promise<SelfAction | undefined> {
    const raw = await this.redis.get(this.keys.selfAction(target, instance));
    return raw ? (JSON.parse(raw) as SelfAction) : undefined;
  }
}

/**
 * Whether an instance.status event is the echo of our own action: an API-requested transition
 * while our call is in flight or just done, or the spurious `instance-shutdown` LXD sends after a
 * start of ours failed (notes §2). A crash right after our successful start is *not* ours.
 */
export function isOwnEcho(mark: SelfAction | undefined, event: { requestor?: unknown; action?: string; timestamp: string }): boolean {
  if (!mark) return false;
  const eventAt = Date.parse(event.timestamp);
  if (eventAt < mark.at - 1000) return false;
  if (event.requestor) return mark.state !== 'failed' || eventAt - mark.at < echoWindowMs;
  return mark.state === 'failed' && mark.action === 'start' && event.action === 'instance-shutdown';
}
