import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import type { Instance } from '../client/instance.js';
import { evaluateFilter } from '../filter/evaluator.js';
import { parseFilter } from '../filter/parser.js';

/**
 * A silence (maintenance window): while it lasts, rule *actions* in its scope are suppressed and
 * recorded as such; events and decisions are still audited. An empty scope field matches anything.
 */
export const silenceSchema = z.object({
  id: z.string(),
  scope: z.object({
    instance: z.string().optional(),
    project: z.string().optional(),
    /** Cluster member (`location`). */
    location: z.string().optional(),
    target: z.string().optional(),
    /** Filter-language expression evaluated on the instance object, e.g. `config.user.tier eq db`. */
    filter: z.string().optional(),
  }),
  reason: z.string(),
  createdBy: z.string(),
  createdAt: z.string(),
  until: z.string(),
});
export type Silence = z.infer<typeof silenceSchema>;

/** What a silence is checked against. */
export interface SilenceSubject {
  target: string;
  project: string;
  location: string;
  instance?: string;
  object?: Instance;
}

/** Silences in Redis (one hash), shared by all replicas; expired ones are ignored and pruned. */
export class Silences {
  constructor(
    private readonly redis: Redis,
    private readonly key: string,
  ) {}

  async add(input: { scope: Silence['scope']; reason: string; createdBy?: string; durationMs: number }): Promise<Silence> {
    if (input.scope.filter) parseFilter(input.scope.filter); // reject a bad filter now, not at match time
    const now = Date.now();
    const silence: Silence = {
      id: randomUUID().slice(0, 8),
      scope: input.scope,
      reason: input.reason,
      createdBy: input.createdBy ?? process.env.USER ?? 'unknown',
      createdAt: new Date(now).toISOString(),
      until: new Date(now + input.durationMs).toISOString(),
    };
    await this.redis.hset(this.key, silence.id, JSON.stringify(silence));
    return silence;
  }

  async remove(id: string): Promise<boolean> {
    return (await this.redis.hdel(this.key, id)) > 0;
  }

  /** Active silences, oldest first. */
  async list(now = Date.now()): Promise<Silence[]> {
    const raw = await this.redis.hvals(this.key);
    const all = raw.map((r) => silenceSchema.parse(JSON.parse(r)));
    const expired = all.filter((s) => Date.parse(s.until) <= now);
    if (expired.length) await this.redis.hdel(this.key, ...expired.map((s) => s.id));
    return all.filter((s) => Date.parse(s.until) > now).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  /** The first active silence covering the subject, if any. */
  async matching(subject: SilenceSubject): Promise<Silence | undefined> {
    return matchingSilence(await this.list(), subject);
  }
}

/** The first of `silences` covering the subject, if any. */
export function matchingSilence(silences: Silence[], subject: SilenceSubject): Silence | undefined {
  for (const s of silences) {
    const sc = s.scope;
    if (sc.instance && sc.instance !== subject.instance) continue;
    if (sc.project && sc.project !== subject.project) continue;
    if (sc.location && sc.location !== subject.location) continue;
    if (sc.target && sc.target !== subject.target) continue;
    if (sc.filter && !(subject.object && evaluateFilter(parseFilter(sc.filter), subject.object))) continue;
    return s;
  }
  return undefined;
}
