import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { RedisConnection } from '../redis/connect.js';

/**
 * The signed links of approval requests (the alert's "decide at …"): an HMAC of the approval's id
 * under a key made once per deployment and kept in Redis, so any replica signs and verifies the
 * same. The link opens the console's page of that one request; deciding still needs a login with
 * the role the rule asks for.
 */
export class ApprovalLinks {
  constructor(
    private readonly deps: {
      redis: RedisConnection;
      /** Where the signing key is kept. */
      key: string;
      /** Where the console's /dashboard is reached from a receiver's message. Default: none (the link is a path). */
      consoleUrl?: string;
    },
  ) {}

  /** The signed link to approval `id` on the console (a path when no console URL is configured). */
  async link(id: string): Promise<string> {
    const base = (this.deps.consoleUrl ?? '/dashboard').replace(/\/+$/, '');
    return `${base}/approvals/${encodeURIComponent(id)}?sig=${await this.signature(id)}`;
  }

  /** Whether `sig` is the signature of the link to approval `id`. */
  async verify(id: string, sig: string): Promise<boolean> {
    const want = Buffer.from(await this.signature(id));
    const got = Buffer.from(sig);
    return want.length === got.length && timingSafeEqual(want, got);
  }

  private async signature(id: string): Promise<string> {
    const { redis, key } = this.deps;
    await redis.set(key, randomBytes(32).toString('base64url'), 'NX');
    const secret = (await redis.get(key)) ?? '';
    return createHmac('sha256', secret).update(`approval:${id}`).digest('base64url').slice(0, 32);
  }
}
