import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { RedisConnection } from '../../redis/connect.js';
import { roles, type Role } from '../../config/roles.js';

/** How a session was opened: a user's token (`?token=`), a name and password on the login page, or the identity provider. */
export type SessionVia = 'token' | 'password' | 'oidc';

const sessionSchema = z.object({
  id: z.string(),
  user: z.string(),
  role: z.enum(roles),
  via: z.enum(['token', 'password', 'oidc']),
  source: z.string(),
  createdAt: z.number(),
  expiresAt: z.number(),
});

/** One signed-in browser. `id` names it (the hash of its cookie, which is never stored). */
export type ConsoleSession = z.infer<typeof sessionSchema>;

/**
 * The console's server-side sessions, in Redis under `<prefix>:console:session:<id>` (with a
 * TTL) and listed in `<prefix>:console:sessions` (a sorted set by expiry). The browser holds a
 * random secret; Redis holds its SHA-256, so a read of Redis does not hand out sessions. Ending a
 * session deletes its key: the next request with its cookie is not signed in, on every replica.
 */
export class ConsoleSessions {
  private readonly index: string;

  constructor(
    private readonly redis: RedisConnection,
    private readonly prefix: string,
    /** How long a session lasts from sign-in. */
    readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.index = `${prefix}:console:sessions`;
  }

  private key(id: string): string {
    return `${this.prefix}:console:session:${id}`;
  }

  private static idOf(secret: string): string {
    return createHash('sha256').update(`reflex-session:${secret}`).digest('hex');
  }

  /** Opens a session; answers the secret the browser keeps in its cookie. */
  async create(user: { name: string; role: Role }, via: SessionVia, source: string): Promise<{ secret: string; session: ConsoleSession }> {
    const secret = randomBytes(32).toString('base64url');
    const at = this.now();
    const session: ConsoleSession = {
      id: ConsoleSessions.idOf(secret),
      user: user.name,
      role: user.role,
      via,
      source,
      createdAt: at,
      expiresAt: at + this.ttlMs,
    };
    // One round trip, and never a listed session without its key (or the other way round).
    await this.redis
      .multi()
      .set(this.key(session.id), JSON.stringify(session), 'PX', this.ttlMs)
      .zadd(this.index, session.expiresAt, session.id)
      .exec();
    return { secret, session };
  }

  /** The session of this cookie secret, or undefined (unknown, expired or ended). */
  async get(secret: string): Promise<ConsoleSession | undefined> {
    if (!/^[A-Za-z0-9_-]{43}$/.test(secret)) return undefined;
    return this.read(ConsoleSessions.idOf(secret));
  }

  private async read(id: string): Promise<ConsoleSession | undefined> {
    const text = await this.redis.get(this.key(id));
    if (!text) return undefined;
    const parsed = sessionSchema.safeParse(JSON.parse(text));
    return parsed.success && parsed.data.expiresAt > this.now() ? parsed.data : undefined;
  }

  /** Ends the session `id`; whether there was one. */
  async end(id: string): Promise<boolean> {
    const [removed] = await Promise.all([this.redis.del(this.key(id)), this.redis.zrem(this.index, id)]);
    return removed > 0;
  }

  /** Every live session, oldest first. */
  async list(): Promise<ConsoleSession[]> {
    await this.redis.zremrangebyscore(this.index, '-inf', String(this.now()));
    const ids = await this.redis.zrange(this.index, '0', '-1');
    const sessions = await Promise.all(ids.map((id) => this.read(id)));
    return sessions.filter((s): s is ConsoleSession => !!s).sort((a, b) => a.createdAt - b.createdAt);
  }

  /** Ends every session of `user`; answers how many. */
  async endUser(user: string): Promise<number> {
    const mine = (await this.list()).filter((s) => s.user === user);
    await Promise.all(mine.map((s) => this.end(s.id)));
    return mine.length;
  }
}
