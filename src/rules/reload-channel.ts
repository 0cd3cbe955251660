import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { z } from 'zod';
import { duplicateConnection, type RedisConnection } from '../redis/connect.js';
import type { ReloadKeys } from '../redis/key-space.js';
import { ReplicaRoster } from '../redis/replica-roster.js';
import type { ReloadOutcome, ReloadRequest } from './rule-set.js';

/** A reload request as published on the reload channel: its id (answers come back on the id's channel). */
export const reloadRequestSchema = z.strictObject({ id: z.string().min(1), by: z.literal('cli') });

/** One replica's answer to a reload request. */
export const reloadAnswerSchema = z.strictObject({
  id: z.string(),
  replica: z.string(),
  role: z.string(),
  result: z.enum(['reloaded', 'refused']),
  summary: z.string(),
  rules: z.number().optional(),
  schedules: z.number().optional(),
  probes: z.number().optional(),
  receivers: z.number().optional(),
  errors: z.array(z.string()).optional(),
});
export type ReloadAnswer = z.infer<typeof reloadAnswerSchema>;

/** Options of {@link ReloadListener}. */
export interface ReloadListenerOptions {
  redis: RedisConnection;
  keys: ReloadKeys;
  logger: Logger;
  /** This replica's name in the roster and its answers. */
  replica: string;
  /** The role it runs (shown by the CLI). */
  role: string;
  reload: (request: ReloadRequest) => Promise<ReloadOutcome>;
  /** How long the replica counts as alive without a heartbeat. Default 15 s; it beats every third of that. */
  ttlMs?: number;
}

/**
 * Makes a replica that holds rules reachable by `reflex rules reload`: it beats in the roster of
 * such replicas (so the CLI knows whose answer to wait for) and listens on the reload channel;
 * each request reloads this replica's rule set and publishes the outcome on the request's channel.
 */
export class ReloadListener {
  private readonly subscriber: RedisConnection;
  private readonly ttlMs: number;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: ReloadListenerOptions) {
    this.subscriber = duplicateConnection(opts.redis);
    this.ttlMs = opts.ttlMs ?? 15_000;
  }

  async start(): Promise<void> {
    const { keys, logger } = this.opts;
    this.subscriber.on('message', (channel: string, message: string) => {
      if (channel !== keys.channel) return;
      let request: z.infer<typeof reloadRequestSchema>;
      try {
        request = reloadRequestSchema.parse(JSON.parse(message));
      } catch (err) {
        logger.warn({ err }, 'malformed reload request ignored');
        return;
      }
      void this.answer(request.id).catch((err: unknown) => logger.error({ err, request: request.id }, 'reload answer not sent'));
    });
    await this.subscriber.subscribe(keys.channel);
    // A Redis refusing writes at the start (/readyz says so) must not stop the replica: the next beat joins.
    await this.beat().catch((err: unknown) => logger.warn({ err }, 'could not join the reload roster; the next heartbeat tries again'));
    this.timer = setInterval(
      () => void this.beat().catch((err: unknown) => logger.debug({ err }, 'reload roster heartbeat failed')),
      Math.max(100, Math.floor(this.ttlMs / 3)),
    );
    this.timer.unref();
  }

  /** Leaves the roster at once (a CLI started now does not wait for this replica) and stops listening. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await new ReplicaRoster(this.opts.redis, this.opts.keys.roster).leave(this.opts.replica).catch(() => undefined);
    this.subscriber.disconnect();
  }

  private async beat(): Promise<void> {
    await new ReplicaRoster(this.opts.redis, this.opts.keys.roster).beat(this.opts.replica, this.ttlMs);
  }

  private async answer(id: string): Promise<void> {
    const outcome = await this.opts.reload({ by: 'cli', requestId: id });
    const answer: ReloadAnswer = {
      id,
      replica: this.opts.replica,
      role: this.opts.role,
      result: outcome.result,
      summary: outcome.summary,
      ...(outcome.result === 'reloaded'
        ? { rules: outcome.rules, schedules: outcome.schedules, probes: outcome.probes, receivers: outcome.receivers }
        : { errors: outcome.errors }),
    };
    await this.opts.redis.publish(this.opts.keys.answers(id), JSON.stringify(answer));
  }
}

/** What {@link requestReload} found: each answer, and the live replicas that did not answer in time. */
export interface ReloadReport {
  id: string;
  answers: ReloadAnswer[];
  missing: string[];
}

/**
 * Asks every replica holding rules to reload (`reflex rules reload`) and waits, at most
 * `timeoutMs`, for the answer of each one live in the roster when asked. Listens for the answers
 * before it publishes the request, so a fast answer is not missed.
 */
export async function requestReload(redis: RedisConnection, keys: ReloadKeys, opts: { timeoutMs: number }): Promise<ReloadReport> {
  const id = randomUUID();
  const listener = duplicateConnection(redis);
  const answers: ReloadAnswer[] = [];
  try {
    const live = await new ReplicaRoster(redis, keys.roster).live();
    let settle: () => void = () => undefined;
    const done = new Promise<void>((resolve) => (settle = resolve));
    const complete = () => live.every((r) => answers.some((a) => a.replica === r));
    listener.on('message', (channel: string, message: string) => {
      if (channel !== keys.answers(id)) return;
      const parsed = reloadAnswerSchema.safeParse(JSON.parse(message));
      if (!parsed.success) return;
      answers.push(parsed.data);
      if (complete()) settle();
    });
    await listener.subscribe(keys.answers(id));
    if (live.length === 0) return { id, answers, missing: [] };
    await redis.publish(keys.channel, JSON.stringify({ id, by: 'cli' } satisfies z.infer<typeof reloadRequestSchema>));
    const timer = setTimeout(settle, opts.timeoutMs);
    await done;
    clearTimeout(timer);
    return {
      id,
      answers: [...answers].sort((a, b) => a.replica.localeCompare(b.replica)),
      missing: live.filter((r) => !answers.some((a) => a.replica === r)),
    };
  } finally {
    listener.disconnect();
  }
}
