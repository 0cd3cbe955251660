import { createHash, randomUUID } from 'node:crypto';
import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import { systemClock, type Clock } from '../clock/clock.js';
import type { InstanceClient } from '../client/client.js';
import type { Instance } from '../client/instance.js';
import { StatusCode } from '../client/status-code.js';
import type { InstanceHealthEvent } from '../events/canonical-event.js';
import type { EventJob } from '../events/event-job.js';
import type { OwnOperation } from '../events/intent.js';
import type { Metrics } from '../metrics/metrics.js';
import type { RedisConnection } from '../redis/connect.js';
import type { InstanceRef, KeySpace } from '../redis/key-space.js';
import { ReplicaRoster } from '../redis/replica-roster.js';
import { streamHead } from '../redis/stream-head.js';
import { matchingSilence, type Silence, type Silences } from '../silences/silences.js';
import type { Probe } from './probe.js';
import { planProbes, type Planned } from './probe-plan.js';
import { OwnOperations } from '../events/own-operations.js';
import { addressOf, runCheck, type CheckResult } from './probe-check.js';
import { ProbeOwner } from './probe-owner.js';
import { afterRemediation, applyOutcome, freshState, notRunning, type Health, type ProbeState } from './probe-state.js';

/** Options of {@link ProbeRunner}. */
export interface ProbeRunnerOptions {
  /** Every target, with its client. */
  targets: { id: string; client: InstanceClient }[];
  redis: RedisConnection;
  keys: KeySpace;
  /** The events queue: transitions go there as `instance.health` events, like every other event. */
  eventsQueue: Queue;
  silences: Silences;
  logger: Logger;
  metrics?: Metrics;
  /** The probes of the rules folder, read at each pass (a reload takes effect on the next). */
  probes: () => Probe[];
  /** Name of this replica in the probe roster. Default the pid and a random id. */
  member?: string;
  /** How long a replica counts as alive without a heartbeat: a dead replica's probes move after this. Default 3000 ms. */
  rosterTtlMs?: number;
  /**
   * How often the instances are listed. Default 10 s, whatever the probes' periods: a listing reads
   * every instance of every target, so its cadence may not follow one probe's period (one instance's
   * `user.reflex.probe.period` would load the whole fleet and the daemon).
   */
  listEveryMs?: number;
  /**
   * How often the instances are listed while no instance has a probe and no event has been archived
   * since the last listing (see {@link ProbeRunner}). Default 60 s; with `listEveryMs` given and this
   * not, `listEveryMs` (every listing is due by its cadence alone).
   */
  quietListEveryMs?: number;
  /**
   * How long the state of a probe that is gone (its instance deleted, the probe removed or out of
   * scope) is kept after its last check, at least three periods. Default 10 minutes.
   */
  forgetAfterMs?: number;
  /** Checks running at once on this replica; a check due while all are busy waits for the next pass. Default 64. */
  concurrency?: number;
  /**
   * The time an instance's startup grace (`initialDelayMs` since its start) is read against; the
   * passes and their cadence run on the process's timers. Default: the wall clock.
   */
  clock?: Clock;
}

/** What this replica knows of the probes it runs, for the gauge and `reflex probes status`. */
interface Known {
  probe: string;
  health: Health;
}

/** How often the instances are listed by default (see {@link ProbeRunnerOptions.listEveryMs}). */
const LIST_EVERY_MS = 10_000;

/**
 * Runs the health probes of every instance in their scope (see docs/probes.md): an event *source*
 * beside the subscriber. Each replica that runs probes beats in a roster; each probe belongs to one
 * live replica (rendezvous hashing), which claims each period's check in Redis (so a check runs once
 * per period even while replicas disagree on the roster for a moment). The state (health, streaks)
 * lives in Redis, so a probe that moves keeps it. Only Running instances are probed, never one that
 * is silenced, locked by one of Reflex's actions, or still in its startup grace; a check that
 * overlaps one of Reflex's own operations, or a restart, is dropped. Transitions only become events.
 *
 * Probes are found by listing every instance (a probe may be declared in an instance's config). While
 * no instance has one, a listing due by the cadence is made only when something could have given one
 * a probe: the rules folder's probes changed, or an event was archived since the last listing (an
 * instance created, its config updated, renamed, moved: the daemon announces each, and the worker
 * archives every event it processes). Otherwise the instances are listed once a minute: an idle
 * fleet without probes is not read in full every 10 s, and a missed announcement still counts within
 * a minute.
 */
export class ProbeRunner {
  private readonly member: string;
  private readonly roster: ReplicaRoster;
  private readonly owner = new ProbeOwner();
  private readonly ttlMs: number;
  private readonly concurrency: number;
  private readonly lastSlot = new Map<string, number>();
  private readonly running = new Set<string>();
  private readonly known = new Map<string, Known>();
  private planned: Planned[] = [];
  private listedAt = 0;
  private prunedAt = 0;
  private inRoster = false;
  /** The last pass left due checks for want of a free slot. */
  private backlog = false;
  private silencesAt = 0;
  private gaugeAt = 0;
  private readonly unknownLogged = new Map<string, { at: number; reason: string }>();
  /** The config keys each instance was last warned of (`target|project|instance`): warned again only when they change. */
  private problemsLogged = new Map<string, string>();
  private listing: Promise<void> | undefined;
  private silences: Silence[] = [];
  private beatTimer: NodeJS.Timeout | undefined;
  private passTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly checks = new Set<Promise<void>>();
  /** The archive's newest entry and the rules folder's probes when the last listing began. */
  private listedHead: string | undefined;
  private listedProbes = '';
  /** Checks run, transitions published, passes made and listings read by this replica since it started (bench, tests). */
  readonly counts = { checks: 0, transitions: 0, dropped: 0, passes: 0, listings: 0 };
  private readonly ownOperations: OwnOperations;

  constructor(private readonly opts: ProbeRunnerOptions) {
    this.member = opts.member ?? `${process.pid}:${randomUUID()}`;
    this.roster = new ReplicaRoster(opts.redis, opts.keys.probes.roster);
    this.ttlMs = opts.rosterTtlMs ?? 3_000;
    this.concurrency = opts.concurrency ?? 64;
    this.ownOperations = new OwnOperations(opts.redis, opts.keys);
  }

  /** This replica's name in the roster. */
  get name(): string {
    return this.member;
  }

  async start(): Promise<void> {
    await this.beat();
    this.beatTimer = setInterval(() => void this.beat(), Math.max(50, Math.floor(this.ttlMs / 3)));
    this.beatTimer.unref();
    this.schedulePass();
  }

  /** Stops checking, leaves the roster at once (the others take its probes on their next pass) and waits for checks in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.beatTimer);
    clearTimeout(this.passTimer);
    await this.roster.leave(this.member).catch(() => undefined);
    await Promise.allSettled([...this.checks]);
  }

  private async beat(): Promise<void> {
    // A replica with no probe to run stays out of the roster: an idle deployment without probes pays
    // nothing for them but the listing. It joins again as soon as a listing finds a probe.
    if (this.listedAt > 0 && this.planned.length === 0) {
      if (this.inRoster) {
        this.inRoster = false;
        await this.roster.leave(this.member).catch(() => undefined);
      }
      return;
    }
    try {
      await this.roster.beat(this.member, this.ttlMs);
      this.inRoster = true;
      this.owner.setMembers(await this.roster.live());
    } catch (err) {
      // The last roster stands; a replica cut off from Redis cannot claim checks anyway.
      this.opts.logger.debug({ err }, 'probe roster heartbeat failed');
    }
  }

  private shortestPeriod(): number {
    const periods = this.planned.map((p) => p.probe.periodMs);
    return periods.length ? Math.min(...periods) : Math.min(...this.opts.probes().map((p) => p.periodMs), 10_000);
  }

  private schedulePass(): void {
    if (this.stopped) return;
    // A pass that left due checks waiting for a free slot comes back soon: checks start as slots free
    // up, so a replica keeps its probes' rate when a check takes longer than the pass interval.
    const every = this.backlog ? 25 : Math.min(1_000, Math.max(25, Math.floor(this.shortestPeriod() / 4)));
    this.passTimer = setTimeout(() => void this.pass().finally(() => this.schedulePass()), every);
    this.passTimer.unref();
  }

  /** One pass: list the instances when due, then start each check of this replica that is due and not running. */
  private async pass(): Promise<void> {
    this.counts.passes++;
    try {
      const listEvery = this.opts.listEveryMs ?? LIST_EVERY_MS;
      if (Date.now() - this.listedAt >= listEvery && (await this.listingMayFindProbes())) {
        await this.list();
        if (this.planned.length > 0 && !this.inRoster) await this.beat();
      }
      if (this.planned.length === 0) return this.updateGauge();
      if (Date.now() - this.silencesAt >= 250) {
        this.silences = await this.opts.silences.list();
        this.silencesAt = Date.now();
      }
    } catch (err) {
      this.opts.logger.warn({ err }, 'probes: could not list instances or silences; probes wait for the next pass');
      return;
    }
    const overdue = await this.overdue().catch(() => new Set<string>());
    const now = Date.now();
    this.backlog = false;
    for (const p of this.planned) {
      if (this.stopped) break;
      if (this.running.has(p.id) || this.owner.ownerOf(p.id) !== this.member) continue;
      const slot = slotOf(p.id, p.probe.periodMs, now);
      // A probe taken over whose last check is a period old or more is checked now, in its current
      // slot: its replica died before checking it (the claim still keeps it to one check a period).
      const last = this.lastSlot.get(p.id) ?? (overdue.has(p.id) ? slot - 1 : undefined);
      if (this.running.size >= this.concurrency) {
        if (last === undefined || last >= slot) continue;
        this.backlog = true;
        break;
      }
      // A probe first seen and not overdue (a start, a new instance, one taken over from a replica
      // that left in time) waits for its own slot: a replica that starts spreads its checks over the
      // period instead of sending them all at once.
      if (last === undefined) this.lastSlot.set(p.id, slot);
      if (last === undefined || last >= slot) continue;
      this.lastSlot.set(p.id, slot);
      this.running.add(p.id);
      const check = this.check(p, slot)
        .catch((err: unknown) => this.opts.logger.warn({ err, probe: p.probe.name, instance: p.ref.instance }, 'probe check failed to run'))
        .finally(() => {
          this.running.delete(p.id);
          this.checks.delete(check);
        });
      this.checks.add(check);
    }
    this.updateGauge();
  }

  /**
   * The probes this replica owns and sees for the first time (a start, a new instance, one taken
   * over) whose last check, by whichever replica, is a period old or more: one read of their states.
   */
  private async overdue(): Promise<Set<string>> {
    const first = this.planned.filter((p) => !this.lastSlot.has(p.id) && !this.running.has(p.id) && this.owner.ownerOf(p.id) === this.member);
    if (first.length === 0) return new Set();
    const raws = await this.opts.redis.hmget(this.opts.keys.probes.state, ...first.map((p) => p.id));
    const now = Date.now();
    const due = new Set<string>();
    first.forEach((p, i) => {
      const lastAt = raws[i] ? (JSON.parse(raws[i]!) as ProbeState).lastAt : undefined;
      if (lastAt !== undefined && now - lastAt >= p.probe.periodMs) due.add(p.id);
    });
    return due;
  }

  /** The rules folder's enabled probes. */
  private fileProbes(): Probe[] {
    return this.opts.probes().filter((p) => p.enabled);
  }

  /**
   * Whether a listing due by the cadence may find a probe (see the class): always while one is
   * planned, when the quiet interval has passed, when the folder's probes changed, or when an event
   * was archived since the last listing; and when the archive cannot be read.
   */
  private async listingMayFindProbes(): Promise<boolean> {
    const quietMs = this.opts.quietListEveryMs ?? this.opts.listEveryMs ?? 60_000;
    if (this.listedAt === 0 || this.planned.length > 0 || Date.now() - this.listedAt >= quietMs) return true;
    if (probesKey(this.fileProbes()) !== this.listedProbes) return true;
    try {
      return (await streamHead(this.opts.redis, this.opts.keys.archive)) !== this.listedHead;
    } catch {
      return true;
    }
  }

  /** Lists the Running instances of every target and the probes each of them has. */
  private async list(): Promise<void> {
    this.listing ??= (async () => {
      // Read before the listing: an event archived while it runs makes the next one due.
      const head = await streamHead(this.opts.redis, this.opts.keys.archive).catch(() => undefined);
      const fileProbes = this.fileProbes();
      const { planned, complete, problems } = await planProbes(
        this.opts.targets,
        fileProbes,
        { planned: this.planned, problems: this.problemsLogged },
        this.opts.logger,
      );
      this.planned = planned;
      this.problemsLogged = problems;
      this.listedAt = Date.now();
      this.listedHead = head;
      this.listedProbes = probesKey(fileProbes);
      this.counts.listings++;
      const ids = new Set(planned.map((p) => p.id));
      for (const id of [...this.lastSlot.keys()]) if (!ids.has(id)) this.lastSlot.delete(id);
      for (const id of [...this.known.keys()]) if (!ids.has(id)) this.known.delete(id);
      for (const id of [...this.unknownLogged.keys()]) if (!ids.has(id)) this.unknownLogged.delete(id);
      await this.readHealth().catch((err: unknown) => this.opts.logger.warn({ err }, 'probes: could not read the probe states; the gauge waits'));
      if (complete) await this.prune(ids);
    })().finally(() => (this.listing = undefined));
    await this.listing;
  }

  /**
   * The health of each probe this replica runs, as listed, for the gauge: what its state in Redis
   * concluded of the instance's current run (so a replica that starts counts what its predecessor
   * concluded), `unknown` when the instance is not Running. A stopped instance is not probed and its
   * last run's conclusion says nothing of the next: its state is marked `unknown` too, with the
   * status it was found in, so `reflex probes status` does not show it unhealthy for as long as it stays down.
   */
  private async readHealth(): Promise<void> {
    const { redis, keys } = this.opts;
    const owned = this.planned.filter((p) => this.owner.ownerOf(p.id) === this.member);
    this.known.clear();
    if (owned.length === 0) return;
    const raws = await redis.hmget(keys.probes.state, ...owned.map((p) => p.id));
    const down: [string, string][] = [];
    owned.forEach((p, i) => {
      const state = raws[i] ? (JSON.parse(raws[i]!) as ProbeState) : undefined;
      const running = p.instance.status_code === StatusCode.Running;
      const current = state && state.startedAt === (p.instance.last_used_at ?? '') ? state.health : 'unknown';
      this.known.set(p.id, { probe: p.probe.name, health: running ? current : 'unknown' });
      if (!running && state && (state.health !== 'unknown' || state.notRunning !== p.instance.status) && !this.running.has(p.id))
        down.push([p.id, JSON.stringify(notRunning(state, p.instance.status))]);
    });
    if (down.length) await redis.hset(keys.probes.state, Object.fromEntries(down));
  }

  /**
   * Forgets the state of probes that no longer exist (an instance deleted, a probe removed or out of
   * scope) once their last check is older than `forgetAfterMs` (or three periods): after a listing of
   * every target, at most every half of that, so one replica's older listing never drops a state
   * another replica has just written, and a target that did not answer loses nothing.
   */
  private async prune(listed: Set<string>): Promise<void> {
    const now = Date.now();
    const keepMs = this.opts.forgetAfterMs ?? 10 * 60_000;
    if (now - this.prunedAt < keepMs / 2) return;
    this.prunedAt = now;
    const before = now - Math.max(keepMs, 3 * Math.max(0, ...this.opts.probes().map((p) => p.periodMs)));
    try {
      const gone: string[] = [];
      for (const [id, raw] of Object.entries(await this.opts.redis.hgetall(this.opts.keys.probes.state))) {
        if (!listed.has(id) && ((JSON.parse(raw) as ProbeState).lastAt ?? 0) < before) gone.push(id);
      }
      if (gone.length === 0) return;
      await this.opts.redis.hdel(this.opts.keys.probes.state, ...gone);
      this.opts.logger.info({ states: gone.length }, 'probes: forgot the state of probes whose instance or probe is gone');
    } catch (err) {
      this.opts.logger.warn({ err }, 'probes: could not forget the state of probes that are gone; tried again later');
    }
  }

  /** Why the instance may not be probed now, or undefined. */
  private async notNow(p: Planned, instance: Instance): Promise<string | undefined> {
    if (instance.status_code !== StatusCode.Running) return `not Running (${instance.status})`;
    const silence = matchingSilence(this.silences, { ...p.ref, location: instance.location ?? 'none', object: instance });
    if (silence) return `silenced by ${silence.id} (${silence.reason})`;
    if (await this.opts.redis.exists(this.opts.keys.instanceLock(p.ref))) return 'Reflex is acting on it';
    const started = Date.parse(instance.last_used_at ?? '');
    if (p.probe.initialDelayMs > 0 && Number.isFinite(started) && (this.opts.clock ?? systemClock).now() - started < p.probe.initialDelayMs)
      return 'in its startup grace';
    return undefined;
  }

  /** Whether one of Reflex's own operations on the instance ran since `since` (or runs now): a check across it says nothing. */
  private async ownActionSince(ref: InstanceRef, since: number): Promise<boolean> {
    const ops = (await this.opts.redis.hvals(this.opts.keys.ownOperations(ref))).map((r) => JSON.parse(r) as OwnOperation);
    return ops.some((op) => op.state === 'sending' || op.state === 'running' || op.sentAt >= since);
  }

  private async check(p: Planned, slot: number): Promise<void> {
    const { redis, keys } = this.opts;
    const claimId = createHash('sha1').update(p.id).digest('hex').slice(0, 20);
    const claimed = await redis.set(keys.probes.claim(claimId, slot), this.member, 'PX', p.probe.periodMs, 'NX');
    if (claimed !== 'OK') return;
    if (await this.notNow(p, p.instance)) return;
    const client = this.client(p.ref);
    const startedAt = Date.now();
    if (p.probe.check === 'exec') await this.ownOperations.probeExec(p.ref, p.probe.command!);
    const address = p.probe.check !== 'exec' && !p.probe.host ? await this.address(client, p.ref.instance) : undefined;
    const result = await runCheck(p.probe, client, p.ref.instance, address);
    this.counts.checks++;
    this.opts.metrics?.probeDuration.observe({ probe: p.probe.name, outcome: result.outcome }, result.durationMs / 1000);
    if (result.outcome === 'failure') this.opts.metrics?.probeFailures.inc({ probe: p.probe.name });
    if (result.outcome === 'unknown') this.cannotRun(p, result.output);
    const runOf = p.instance.last_used_at ?? '';
    const raw = await redis.hget(keys.probes.state, p.id);
    const stored = raw ? (JSON.parse(raw) as ProbeState) : undefined;
    let current =
      stored && stored.startedAt === runOf && stored.fingerprint === p.probe.fingerprint ? stored : freshState(runOf, p.probe.fingerprint);
    if (result.outcome !== 'success' && (await this.ownActionSince(p.ref, startedAt - 1_000))) {
      // The check overlapped one of Reflex's own operations (an exec restarting the service): it says nothing.
      this.counts.dropped++;
      return;
    }
    if (current.health === 'unhealthy' && !current.remediated && (await this.ownActionSince(p.ref, current.changedAt ?? 0)))
      current = afterRemediation(current);
    const { state, transition } = applyOutcome(current, result.outcome, startedAt, p.probe);
    const next = { ...state, notRunning: undefined, instance: p.ref.instance, lastOutput: result.output, lastDurationMs: result.durationMs };
    if (transition) {
      // Decide twice, act once: a result across a restart, one of Reflex's own operations, an
      // operator's stop or a new silence is older than what it would report.
      const why = await this.stale(p, client, runOf, startedAt);
      if (why) {
        this.counts.dropped++;
        this.opts.logger.info(
          { probe: p.probe.name, instance: p.ref.instance, why },
          'probe result dropped: the instance changed while it was checked',
        );
        return;
      }
    }
    // The transition's event first, then the state that says it happened: a failed write of the event
    // leaves the state as it was, so the next check reports the transition again (its event id is
    // deterministic, so a repeat after a failed state write is one event).
    if (transition) await this.publish(p, next, transition.from, transition.consecutive, transition.since, result);
    await redis.hset(keys.probes.state, p.id, JSON.stringify(next));
    this.known.set(p.id, { probe: p.probe.name, health: next.health });
  }

  /**
   * A check that could not run is logged as a warning: the first one of a probe on an instance, and
   * again when its reason changes or every ten minutes while it lasts (the metric counts each one,
   * and the alert ReflexProbeCannotRun fires when they go on).
   */
  private cannotRun(p: Planned, output: string): void {
    const last = this.unknownLogged.get(p.id);
    const now = Date.now();
    // The same reason with another operation's id or another duration is the same reason.
    const reason = output.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, 'ID').replace(/\d+/g, 'N');
    if (last && last.reason === reason && now - last.at < 10 * 60_000) return;
    this.unknownLogged.set(p.id, { at: now, reason });
    this.opts.logger.warn(
      { probe: p.probe.name, instance: p.ref.instance, project: p.ref.project, target: p.ref.target, output },
      `probe ${p.probe.name}: the check of ${p.ref.instance} could not run (unknown, never unhealthy: nothing is healed while it lasts)`,
    );
  }

  /** Why a check that would change the health is stale, read afresh; undefined when it stands. */
  private async stale(p: Planned, client: InstanceClient, runOf: string, startedAt: number): Promise<string | undefined> {
    const now = (await client.getInstance(p.ref.instance)).value;
    // The name may now be another instance's (deleted and made again): its health is not this one's.
    if (p.uuid !== undefined && now.config?.['volatile.uuid'] !== p.uuid) return 'another instance under the name now';
    if ((now.last_used_at ?? '') !== runOf) return 'restarted during the check';
    // A silence made during the check counts: the silences are read afresh, not the pass's.
    this.silences = await this.opts.silences.list();
    this.silencesAt = Date.now();
    const why = await this.notNow(p, now);
    if (why) return why;
    if (await this.ownActionSince(p.ref, startedAt - 1_000)) return 'one of Reflex’s own operations ran during the check';
    return undefined;
  }

  private async publish(p: Planned, state: ProbeState, from: Health, consecutive: number, since: number, result: CheckResult): Promise<void> {
    const id = createHash('sha256').update(`health|${p.id}|${state.startedAt}|${state.seq}`).digest('hex').slice(0, 32);
    const event: InstanceHealthEvent = {
      kind: 'instance.health',
      id,
      target: p.ref.target,
      location: p.instance.location ?? 'none',
      project: p.ref.project,
      timestamp: new Date().toISOString(),
      synthetic: false,
      instance: p.ref.instance,
      probe: p.probe.name,
      health: state.health === 'unhealthy' ? 'unhealthy' : 'healthy',
      previous: from,
      check: p.probe.check,
      output: result.output,
      consecutive,
      durationMs: result.durationMs,
      since: new Date(since).toISOString(),
      ...(p.uuid ? { uuid: p.uuid } : {}),
    };
    const job: EventJob = { kind: 'synthetic', target: p.ref.target, event, receivedAt: Date.now() };
    await this.opts.eventsQueue.add(event.kind, job, { jobId: `health-${id}` });
    this.counts.transitions++;
    this.opts.logger.info(
      { probe: p.probe.name, instance: p.ref.instance, project: p.ref.project, from, to: event.health, output: result.output },
      `probe ${p.probe.name}: ${p.ref.instance} is ${event.health}`,
    );
  }

  private client(ref: InstanceRef): InstanceClient {
    const t = this.opts.targets.find((x) => x.id === ref.target)!;
    return t.client.withProject(ref.project);
  }

  private async address(client: InstanceClient, instance: string): Promise<string | undefined> {
    try {
      return addressOf(await client.getInstanceState(instance));
    } catch {
      return undefined;
    }
  }

  private updateGauge(): void {
    const gauge = this.opts.metrics?.probeInstances;
    if (!gauge || Date.now() - this.gaugeAt < 1_000) return;
    this.gaugeAt = Date.now();
    gauge.reset();
    // Only the probes this replica runs now: a probe that moved is counted by its new owner.
    for (const [id, k] of this.known) if (this.owner.ownerOf(id) === this.member) gauge.inc({ probe: k.probe, health: k.health });
  }
}

/** Probes as one string that changes when any of them does. */
function probesKey(probes: Probe[]): string {
  return probes.map((p) => p.fingerprint).join(',');
}

/** Each probe's offset in its period (a hash of its id), computed once. */
const offsets = new Map<string, number>();

/** The period slot a check of probe `id` belongs to, offset per probe so the checks of one period spread over it. */
function slotOf(id: string, periodMs: number, now: number): number {
  let hash = offsets.get(id);
  if (hash === undefined) {
    if (offsets.size > 100_000) offsets.clear();
    hash = createHash('sha1').update(id).digest().readUInt32BE(0);
    offsets.set(id, hash);
  }
  return Math.floor((now + (hash % periodMs)) / periodMs);
}
