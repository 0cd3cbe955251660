import { Queue, Worker, type KeepJobs } from 'bullmq';
import { duplicateConnection, type RedisConnection } from '../redis/connect.js';
import type { Logger } from 'pino';
import type { AuditLog } from '../audit/audit-log.js';
import type { Clock } from '../clock/clock.js';
import { ReflexError } from '../errors/reflex-error.js';
import { alertSchema, toAlert, type Alert, type AlertAction, type AlertChange, type AlertInput } from '../alerts/alert.js';
import { AlertBoard, alertMute } from './alert-board.js';
import { AlertGrouper, flushJobSchema, groupOf, type AlertMute } from './alert-grouper.js';
import { deliveryBackoff, DeliveryProcessor, enqueueDelivery } from './delivery-worker.js';
import { deliverDirect, type DirectOutcome } from './direct-delivery.js';
import { auditLink, type NotifyConfig } from './notify-config.js';
import { keySpace, type NotifyKeys } from '../redis/key-space.js';
import { RateLimiter } from './rate-limiter.js';
import { Inhibitor } from '../alerts/inhibition.js';
import { createReceiver, type Receiver } from './receiver.js';
import { Router, type MatchedRoute } from './router.js';
import { TokenLock } from '../redis/token-lock.js';
import { Silences } from '../silences/silences.js';

/** Options of {@link Notifier}. */
export interface NotifierOptions extends NotifyConfig {
  /** Connection for state; queues and workers use duplicates of it. */
  redis: RedisConnection;
  audit: AuditLog;
  /** Key prefix shared by the replicas of one deployment. Default `reflex`. */
  prefix?: string;
  logger?: Logger;
  /** Where `urlEnv` and `secretEnv` are read from. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Run the flush and delivery workers in this process. Default true. */
  workers?: boolean;
  /** Deliveries sent in parallel by this process. Default 4. */
  concurrency?: number;
  /** Finished delivery jobs kept (`jobsKeepCompleted[Ms]`, `jobsKeepFailed[Ms]`). Default: completed a day, failed 7 days. */
  jobHistory?: { removeOnComplete: KeepJobs; removeOnFail: KeepJobs };
  /** The time groups read when they decide whether a repeat is due (the flushes themselves are BullMQ delayed jobs). Default: the wall clock. */
  clock?: Clock;
}

/** How long an alert is remembered for `resolve(fingerprint)`. */
const alertTtlMs = 30 * 86_400_000;

/** Lifetime of an alert's lock: far longer than the few Redis round trips done under it. */
const alertLockMs = 5_000;

/**
 * Forwards alerts to receivers: routes each alert, groups it (state in Redis, so replicas agree),
 * and queues each message on a durable BullMQ queue that retries with backoff and falls back to
 * another receiver. Every replica may call {@link notify} and {@link resolve} for the same
 * condition: each message still goes out once.
 */
export class Notifier {
  readonly keys: NotifyKeys;
  readonly receivers: ReadonlyMap<string, Receiver>;
  /** Firing alerts and pending groups, as `reflex alerts` shows them. */
  readonly board: AlertBoard;
  /** What flushes leave out of messages: inhibition, then the silences muting notifications (the inhibition rules as last configured). */
  readonly mute: AlertMute;
  private router: Router;
  private currentMute: AlertMute;
  private readonly grouper: AlertGrouper;
  private readonly flushQueue: Queue;
  private readonly deliveryQueue: Queue;
  private readonly workers: Worker[] = [];
  private readonly connections: RedisConnection[] = [];
  /** Serialises raising, amending and resolving one alert across replicas (the same token lock as instances'). */
  private readonly alertLock: TokenLock;
  /** The deployment's silences (`reflex silence`, the dashboard), read when a group is flushed. */
  private readonly silences: Silences;

  /** Validates receivers and routes and reads their secrets; throws CONFIG_INVALID. */
  constructor(private readonly opts: NotifierOptions) {
    const keys = keySpace(opts.prefix);
    this.keys = keys.notify;
    this.alertLock = new TokenLock(opts.redis, { ttlMs: alertLockMs });
    const receivers = buildReceivers(opts.receivers, opts.env);
    this.receivers = receivers;
    this.router = new Router(opts.route, new Set(receivers.keys()));
    const connection = this.connection();
    const queueOpts = { connection, prefix: this.keys.bullPrefix };
    this.flushQueue = new Queue(this.keys.flushQueue, queueOpts);
    this.deliveryQueue = new Queue(this.keys.deliveryQueue, {
      ...queueOpts,
      defaultJobOptions: opts.jobHistory ?? { removeOnComplete: { age: 86_400 }, removeOnFail: { age: 7 * 86_400 } },
    });
    for (const q of [this.flushQueue, this.deliveryQueue]) q.on('error', (err) => opts.logger?.debug({ err, queue: q.name }, 'queue error'));
    this.board = new AlertBoard(opts.redis, this.keys);
    this.silences = new Silences(opts.redis, keys.silences, undefined, opts.clock);
    this.currentMute = alertMute(this.board, new Inhibitor(opts.inhibitRules), this.silences);
    this.mute = (alerts) => this.currentMute(alerts);
    this.grouper = new AlertGrouper(
      opts.redis,
      this.keys,
      this.flushQueue,
      (n) => {
        const receiver = receivers.get(n.receiver);
        // A group routed to a receiver a reload has since removed: its message has nowhere to go.
        if (!receiver)
          return Promise.resolve(
            void opts.logger?.warn(
              { receiver: n.receiver, notification: n.id },
              'notification dropped: its receiver is no longer configured (removed by a reload)',
            ),
          );
        return enqueueDelivery(this.deliveryQueue, receiver, { notification: n, receiver: n.receiver });
      },
      this.mute,
      opts.clock,
    );
    if (opts.workers ?? true) this.startWorkers();
  }

  /**
   * Raises (or re-raises) an alert; with `status: 'resolved'` clears it. Fills in the fingerprint,
   * start time and audit link. `opts.receiver` sends to that receiver instead of routing.
   * A firing alert that started before the same condition was last resolved is late news (a
   * replica or a retried job raising it again after the recovery) and changes nothing; one raised
   * again while it fires keeps its triage. Returns the alert as stored.
   */
  async notify(input: AlertInput, opts: { receiver?: string } = {}): Promise<Alert> {
    const direct = opts.receiver === undefined ? undefined : this.router.direct(opts.receiver);
    const alert = toAlert({ ...input, auditUrl: input.auditUrl ?? auditLink(this.opts.auditUrl, input) });
    return this.locked(alert.fingerprint, async () => {
      const known = await this.known(alert.fingerprint);
      if (alert.status === 'firing' && known?.status === 'resolved' && known.endsAt && Date.parse(alert.startsAt) < Date.parse(known.endsAt))
        return known;
      // The same alert raised again (a replica, a retried job) keeps what the people on call said of it.
      if (known?.status === 'firing' && known.triage && !alert.triage) return this.store({ ...alert, triage: known.triage }, direct);
      return this.store(alert, direct);
    });
  }

  /**
   * Sends an alert (firing or resolved) at once to the receivers it routes to, touching nothing in
   * Redis: the fallback path while Redis refuses writes ({@link deliverDirect}). Not grouped,
   * stored, muted or audited. Answers what each receiver made of it.
   */
  async sendDirect(input: AlertInput): Promise<DirectOutcome[]> {
    const alert = toAlert({ ...input, auditUrl: input.auditUrl ?? auditLink(this.opts.auditUrl, input) });
    return deliverDirect(alert, this.router.match(alert), this.receivers, this.opts.logger);
  }

  /**
   * Marks the alert with this fingerprint resolved (e.g. the instance is Running again), adding
   * what Reflex did since. `endsAt` defaults to now; pass the time of the event that showed the
   * recovery, so it compares with start times on the same clock. A resolved message goes out only
   * if the firing one did. Returns undefined when no such alert is known or it is already resolved.
   */
  async resolve(
    fingerprint: string,
    update: { summary?: string; actions?: AlertAction[]; outcome?: string; endsAt?: string } = {},
  ): Promise<Alert | undefined> {
    return this.locked(fingerprint, async () => {
      const known = await this.known(fingerprint);
      if (!known || known.status === 'resolved') return undefined;
      return this.store(
        toAlert({
          ...known,
          status: 'resolved',
          endsAt: update.endsAt ?? new Date().toISOString(),
          summary: update.summary ?? known.summary,
          actions: [...known.actions, ...(update.actions ?? [])],
          outcome: update.outcome ?? known.outcome,
        }),
      );
    });
  }

  /**
   * Changes a known alert under its lock: `change` gets the stored alert and returns the fields to
   * change (what Reflex did, the outcome; `status: 'resolved'` with `endsAt` to resolve it), or
   * undefined to leave it. A firing message already sent is not sent again for an amendment; the
   * change shows in the group's next message (e.g. the resolved one). Serialised with
   * {@link notify}, {@link resolve} and other amendments of the same fingerprint, so an amendment
   * racing the recovery is neither lost nor reopens the alert. Returns the alert as stored, or
   * undefined when unknown or left unchanged.
   */
  async amend(fingerprint: string, change: (known: Alert) => AlertChange | undefined | Promise<AlertChange | undefined>): Promise<Alert | undefined> {
    // Most finished actions belong to no alert: answer those without taking the lock.
    if (!(await this.known(fingerprint))) return undefined;
    return this.locked(fingerprint, async () => {
      const known = await this.known(fingerprint);
      const fields = known && (await change(known));
      if (!known || !fields) return undefined;
      return this.store(toAlert({ ...known, ...fields }));
    });
  }

  /**
   * Builds receivers, routes and inhibition rules from new settings (re-reading every secret from
   * its variable or file: a rotated token is taken) without touching the running ones; throws
   * CONFIG_INVALID as the constructor does. `commit` then puts them in place in one step: the
   * workers' map of receivers is updated in place, so queued messages go to the new definition of
   * their receiver (one whose receiver is gone fails as unknown, audited). Groups keep their state.
   */
  prepareReconfigure(settings: NotifyConfig): { receivers: string[]; commit(): void } {
    const receivers = buildReceivers(settings.receivers, this.opts.env);
    const router = new Router(settings.route, new Set(receivers.keys()));
    const mute = alertMute(this.board, new Inhibitor(settings.inhibitRules), this.silences);
    return {
      receivers: [...receivers.keys()],
      commit: () => {
        const live = this.receivers as Map<string, Receiver>;
        live.clear();
        for (const [name, r] of receivers) live.set(name, r);
        this.router = router;
        this.currentMute = mute;
        Object.assign(this.opts, {
          receivers: settings.receivers,
          route: settings.route,
          inhibitRules: settings.inhibitRules,
          auditUrl: settings.auditUrl,
        });
      },
    };
  }

  /** Stops the workers (letting running jobs finish) and closes the queues. */
  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.close()));
    await Promise.all([this.flushQueue.close(), this.deliveryQueue.close()]);
    for (const c of this.connections) c.disconnect();
  }

  private startWorkers(): void {
    const { logger } = this.opts;
    const processor = new DeliveryProcessor({
      receivers: this.receivers,
      queue: this.deliveryQueue,
      rateLimiter: new RateLimiter(this.opts.redis, this.keys),
      audit: this.opts.audit,
      redis: this.opts.redis,
      missedFiringKey: (r) => this.keys.missedFiring(r),
      logger,
    });
    const base = { prefix: this.keys.bullPrefix, lockDuration: 30_000, stalledInterval: 15_000 };
    const flusher = new Worker(this.keys.flushQueue, async (job) => void (await this.grouper.flush(flushJobSchema.parse(job.data))), {
      ...base,
      connection: this.connection(),
      concurrency: 4,
    });
    const deliverer = new Worker(this.keys.deliveryQueue, (job, token) => processor.process(job, token), {
      ...base,
      connection: this.connection(),
      concurrency: this.opts.concurrency ?? 4,
      settings: { backoffStrategy: deliveryBackoff(this.receivers) },
    });
    for (const w of [flusher, deliverer]) {
      w.on('error', (err) => logger?.error({ err }, 'notification worker error'));
      this.workers.push(w);
    }
  }

  private async known(fingerprint: string): Promise<Alert | undefined> {
    const raw = await this.opts.redis.get(this.keys.alert(fingerprint));
    const parsed = raw ? alertSchema.safeParse(JSON.parse(raw)) : undefined;
    return parsed?.success ? parsed.data : undefined;
  }

  private async store(alert: Alert, direct?: MatchedRoute): Promise<Alert> {
    const m = this.opts.redis.multi().set(this.keys.alert(alert.fingerprint), JSON.stringify(alert), 'PX', alertTtlMs);
    if (alert.status === 'firing') m.zadd(this.keys.active, Date.parse(alert.startsAt) || Date.now(), alert.fingerprint);
    else m.zrem(this.keys.active, alert.fingerprint);
    await m.exec();
    for (const route of direct ? [direct] : this.router.match(alert))
      await this.grouper.add(alert, groupOf(alert, route, this.receivers.get(route.receiver)?.config.sendResolved ?? true));
    return alert;
  }

  /**
   * Runs `fn` holding the alert's lock, so replicas and the event and action workers change one
   * alert one at a time. The lock expires by itself if its holder dies; a waiter gives up after
   * twice that time and goes ahead, since a late message is better than none.
   */
  private async locked<T>(fingerprint: string, fn: () => Promise<T>): Promise<T> {
    const key = this.keys.alertLock(fingerprint);
    const until = Date.now() + 2 * alertLockMs;
    let held = await this.alertLock.tryAcquire(key);
    while (!held && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 10 + Math.random() * 20));
      held = await this.alertLock.tryAcquire(key);
    }
    try {
      return await fn();
    } finally {
      await held?.release();
    }
  }

  private connection(): RedisConnection {
    const c = duplicateConnection(this.opts.redis);
    this.connections.push(c);
    return c;
  }
}

/** The receivers of a configuration by name, their secrets read; throws CONFIG_INVALID on a duplicate name or a bad fallback. */
function buildReceivers(configs: NotifyConfig['receivers'], env: NodeJS.ProcessEnv | undefined): Map<string, Receiver> {
  const receivers = new Map<string, Receiver>();
  for (const cfg of configs) {
    const r = createReceiver(cfg, env);
    if (receivers.has(r.name)) throw new ReflexError('CONFIG_INVALID', `notification receiver "${r.name}" is defined twice`);
    receivers.set(r.name, r);
  }
  for (const r of receivers.values()) {
    const fb = r.config.fallback;
    if (fb !== undefined && (!receivers.has(fb) || fb === r.name))
      throw new ReflexError('CONFIG_INVALID', `notification receiver "${r.name}": fallback "${fb}" is not another configured receiver`);
  }
  return receivers;
}
