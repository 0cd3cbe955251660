import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { AuditLog } from '../../src/audit/audit-log.js';
import type { StoredAuditRecord } from '../../src/audit/audit-record.js';
import { StatusCode } from '../../src/client/status-code.js';
import { Queue } from 'bullmq';
import { keySpace, type KeySpace } from '../../src/redis/key-space.js';
import type { ReflexProcess } from '../../test/support/reflex-process.js';
import { hostEnv, newPrefix, optIn, reflexRun, RestartableRedis } from '../support.js';
import { sleep, until } from '../../test/support/wait.js';
import type { Incident, Observation, SilenceWindow } from './checker.js';
import type { Step } from './history.js';
import { RealDaemon, SimDaemon, type Daemon } from './daemons.js';
import { LifecycleWitness } from './witness.js';

const bin = fileURLToPath(new URL('../../bin/reflex.js', import.meta.url));
/** How often the replicas resync: an Error (112) comes with no event and is found by the resync. */
const resyncMs = 750;
/** The replicas' resync grace (Reflex's default): a resync reports a difference this long after its read. */
const resyncGraceMs = 1_500;
const replicaCount = 2;
/** How long a paused Redis sleeps, a full one stays full. */
const faultMs = 800;
const silenceMs = 2_000;

/** What one history did: its observation for the checker, and how many faults it injected. */
export interface HistoryRun {
  observation: Observation;
  faults: number;
}

/**
 * One Redis, one daemon (the simulator, or a real LXD or Incus) and two `reflex run` replicas (each
 * subscriber and worker, one reading the stream under the lease), kept across histories: each
 * history works on instances of its own names, so what it checks is its own. Faults that end (a
 * paused or full Redis, a frozen daemon) are undone before the history settles; a killed replica
 * is replaced.
 */
export class World {
  private readonly replicas: ReflexProcess[] = [];
  private readonly killed = new Set<ReflexProcess>();
  private readonly up = new WeakSet<ReflexProcess>();
  private died: string[] = [];
  /** Each time a replica took the subscriber lease (its pid): the last one holds it. */
  private readonly leases: { at: number; pid: number | undefined }[] = [];
  private disruptions: { at: number; kind: 'kill' | 'cut' }[] = [];
  private readonly background: Promise<unknown>[] = [];
  private stopping = false;
  private readonly queues: Queue[];

  private constructor(
    private readonly redis: RestartableRedis,
    readonly daemon: Daemon,
    private readonly prefix: string,
    private readonly keys: KeySpace,
    private readonly witness: LifecycleWitness,
    private readonly connection: Redis,
  ) {
    connection.on('error', () => {}); // a restarted or paused Redis, on purpose
    this.queues = [keys.eventsQueue, keys.actionsQueue].map((name) => new Queue(name, { connection, prefix: keys.bullPrefix }));
    for (const q of this.queues) q.on('error', () => {});
  }

  /** A world on the simulator (default) or the test bed's real LXD or Incus. */
  static async start(on: 'sim' | 'lxd' | 'incus' = 'sim'): Promise<World> {
    const daemon = on === 'sim' ? await SimDaemon.start() : await RealDaemon.start(on);
    const redis = await RestartableRedis.start().catch(async (err: unknown) => {
      await daemon.stop();
      throw err;
    });
    const prefix = newPrefix('promises');
    const witness = new LifecycleWitness(`unix://${daemon.socketPath}`);
    await witness.start();
    const world = new World(redis, daemon, prefix, keySpace(prefix), witness, new Redis(redis.url, { maxRetriesPerRequest: null }));
    for (let i = 0; i < replicaCount; i++) world.replicas.push(world.replica());
    try {
      await world.ready();
    } catch (err) {
      await world.stop();
      throw err;
    }
    return world;
  }

  /** Runs a history on fresh instances named `<name>-0`, `<name>-1`, …, settles, and observes. */
  async run(name: string, steps: readonly Step[], slots = 3): Promise<HistoryRun> {
    const started = Date.now();
    this.died = [];
    this.disruptions = [];
    this.killed.clear();
    this.witness.forget();
    const current: (string | undefined)[] = [];
    const names = new Set<string>();
    for (let i = 0; i < slots; i++) {
      const n = `${name}-${i}`;
      // Through the API, as an operator launches one: Reflex hears of it as it would of a real one.
      await this.operator.create('setup', n, optIn);
      await this.operator.state('setup', n, 'start');
      current.push(n);
      names.add(n);
    }
    const incidents: Incident[] = [];
    const silences: SilenceWindow[] = [];
    let faults = 0;
    let renames = 0;
    for (const step of steps) {
      const n = step.slot === -1 ? `${name}-ghost` : current[step.slot];
      switch (step.kind) {
        case 'crash':
        case 'error': {
          if (!n) break;
          const uuid = await this.daemon.identity(n);
          const at = Date.now();
          if (step.kind === 'crash' ? await this.daemon.crash(n) : this.daemon.error(n)) incidents.push({ at, kind: step.kind, name: n, uuid });
          break;
        }
        case 'stop':
        case 'start':
          if (n) await this.operator.state(step.kind, n, step.kind);
          break;
        case 'delete':
          if (n) await this.remove(n, 'delete');
          current[step.slot] = undefined;
          break;
        case 'recreate': {
          const again = n ?? `${name}-${step.slot}`;
          if (n) await this.remove(n, 'recreate');
          await this.operator.create('recreate', again, optIn);
          await this.operator.state('recreate', again, 'start');
          current[step.slot] = again;
          names.add(again);
          break;
        }
        case 'rename': {
          if (!n) break;
          const to = `${name}-${step.slot}r${++renames}`;
          if (await this.operator.rename('rename', n, to)) {
            await this.operator.state('rename', n, 'stop');
            await this.operator.rename('rename', n, to);
            await this.operator.state('rename', to, 'start');
          }
          current[step.slot] = to;
          names.add(to);
          break;
        }
        case 'opt-out':
        case 'opt-in':
          if (n) await this.operator.config(step.kind, n, { 'user.reflex.autorestart': step.kind === 'opt-in' ? 'true' : 'false' });
          break;
        case 'silence': {
          if (!n) break;
          const out = await this.cli(['silence', 'add', '--instance', n, '--duration', `${silenceMs}ms`, '--reason', 'chaos history']);
          const until = /until (\S+)/.exec(out ?? '')?.[1];
          if (until) silences.push({ at: Date.parse(until) - silenceMs, name: n, until: Date.parse(until) });
          break;
        }
        case 'heal': {
          if (!n) break;
          const uuid = await this.daemon.identity(n);
          const at = Date.now();
          if ((await this.cli(['heal', n, '--wait', '0', '--target', `unix://${this.daemon.socketPath}`])) !== undefined)
            incidents.push({ at, kind: 'heal', name: n, uuid });
          break;
        }
        default:
          faults++;
          await this.fault(step, n ?? `${name}-ghost`);
      }
      await sleep(step.gapMs);
    }
    const observation = await this.settleAndObserve(`${name}-`, started, incidents, silences, names);
    this.later(
      (async () => {
        for (const n of names) await this.remove(n, 'cleanup', this.daemon.cleaner);
      })(),
    );
    return { observation, faults };
  }

  dumpLogs(log: (line: string) => void): void {
    for (const p of [...this.killed, ...this.replicas])
      for (const l of p.logs)
        log(`${p.child.pid} ${new Date(Number(l.time)).toISOString().slice(11, 23)} ${String(l.msg)} ${String(l.instance ?? '')}`);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.allSettled(this.background);
    await Promise.all(this.replicas.map((p) => p.stop()));
    await Promise.all(this.queues.map((q) => q.close()));
    this.connection.disconnect();
    await this.witness.stop();
    await this.daemon.stop();
    await this.redis.stop();
  }

  private replica(): ReflexProcess {
    const p = reflexRun(this.daemon, this.redis.url, this.prefix, 'all', { REFLEX_CRASHLOOP_BACKOFF_MS: '200' }, [
      '--resync-interval',
      `${resyncMs}ms`,
    ]);
    p.child.once('exit', (code, signal) => {
      if (this.stopping || this.killed.has(p)) return;
      const last = p.logs.slice(-3).map((l) => String(l.msg));
      this.died.push(`replica pid ${p.child.pid} exited (${signal ?? `code ${code}`}); last log: ${last.join(' | ')}`);
      this.replicas.splice(this.replicas.indexOf(p), 1, this.replica());
    });
    return p;
  }

  /** Every replica running and one of them reading the stream (the witness is the other listener). */
  private async ready(): Promise<void> {
    // A replica that dies on the way is replaced by its exit handler (and counted as died): wait for that one.
    for (let round = 0; round < 10; round++) {
      const starting = this.replicas.filter((p) => !this.up.has(p));
      if (!starting.length) break;
      await Promise.all(
        starting.map((p) =>
          p.waitForLog('reflex running', 90_000).then(
            () => this.up.add(p),
            () => {},
          ),
        ),
      );
    }
    if (this.replicas.some((p) => !this.up.has(p))) throw new Error(`a replica did not start: ${this.died.join('; ')}`);
    // The lease holder alive: after its SIGKILL another takes the lease in about 3 s.
    await until(
      'a replica to hold the subscriber lease',
      () => {
        this.scanLeases();
        const holder = this.leases[this.leases.length - 1]?.pid;
        return this.replicas.some((p) => p.child.pid === holder && p.child.exitCode === null && p.child.signalCode === null);
      },
      30_000,
      50,
    ).catch((err: Error) => {
      // What each replica last said of leases, Redis and the stream: the finding must be readable.
      const said = [...this.killed, ...this.replicas].map((p) => {
        const lines = p.logs.filter((l) => /lease|Redis|stream|resync/.test(String(l.msg ?? ''))).slice(-8);
        return `pid ${p.child.pid}${p.child.exitCode !== null || p.child.signalCode !== null ? ' (exited)' : ''}: ${lines.map((l) => `${new Date(Number(l.time)).toISOString().slice(11, 23)} ${String(l.msg)}`).join(' | ')}`;
      });
      throw new Error(`${err.message}; leases seen: ${JSON.stringify(this.leases.slice(-3))}; ${said.join('; ')}`);
    });
    await until('a replica to read the event stream', () => this.daemon.streamRead(), 30_000, 50);
  }

  /**
   * When no replica wrote the stream, from the replicas' logs: after a kill, from a moment before it
   * (what the victim read but had not written yet dies with it) until a replica takes the lease
   * (about 3 s when the victim held it; a moment when it did not); after a cut, until the lease
   * holder is connected again.
   */
  private gaps(): { from: number; to: number }[] {
    this.scanLeases();
    const lines = [...this.killed, ...this.replicas].flatMap((p) =>
      p.logs.map((l) => ({ at: Number(l.time), pid: p.child.pid, msg: String(l.msg ?? '') })),
    );
    const leases = this.leases;
    return this.disruptions.map(({ at, kind }) => {
      if (kind === 'kill') return { from: at - 1_000, to: leases.find((l) => l.at > at)?.at ?? at + 300 };
      const holder = leases.filter((l) => l.at < at).pop()?.pid;
      const back = lines.find((l) => l.at > at && l.pid === holder && l.msg === 'event stream connected');
      return { from: at, to: back?.at ?? at + 1_000 };
    });
  }

  /** Whether each instance's daemon status is the last one audited for it (a gone one is; one renamed since, when Running). */
  private async caughtUp(names: Set<string>, audit: StoredAuditRecord[]): Promise<boolean> {
    const last = new Map<string, number>();
    for (const r of audit) {
      const event = (r as { event?: { kind?: string; to?: number } }).event;
      if (r.type === 'event' && r.instance && event?.kind === 'instance.status' && typeof event.to === 'number') last.set(r.instance, event.to);
    }
    for (const n of names) {
      const status = await this.daemon.status(n);
      const known = last.get(n);
      // None audited under this name (renamed since): only Running needs no report.
      if (status !== undefined && (known === undefined ? status !== StatusCode.Running : known !== status)) return false;
    }
    return true;
  }

  /** Whether a resync reported the Error (an event record after it) or the instance left it. */
  private async errorSeen(i: Incident, audit: StoredAuditRecord[]): Promise<boolean> {
    // The Error's own report (→ 112), not any event of the instance since (an opt-in's instance-updated processed late is not it).
    const reported = (r: StoredAuditRecord) => (r as { event?: { kind?: string; to?: number } }).event?.to === 112;
    if (audit.some((r) => r.type === 'event' && r.instance === i.name && Date.parse(r.at) >= i.at && reported(r))) return true;
    return (await this.daemon.identity(i.name)) !== i.uuid || (await this.daemon.status(i.name)) !== 112;
  }

  /** Adds the lease takeovers logged since the last look to {@link leases}, oldest first. */
  private scanLeases(): void {
    const last = this.leases[this.leases.length - 1]?.at ?? 0;
    const fresh = [...this.killed, ...this.replicas].flatMap((p) =>
      p.logs
        .filter((l) => String(l.msg ?? '').startsWith('subscriber lease acquired') && Number(l.time) > last)
        .map((l) => ({ at: Number(l.time), pid: p.child.pid })),
    );
    this.leases.push(...fresh.sort((a, b) => a.at - b.at));
  }

  private get operator() {
    return this.daemon.operator;
  }

  private async remove(name: string, step: string, by = this.operator): Promise<void> {
    await by.state(step, name, 'stop');
    await by.remove(step, name);
  }

  private async fault(step: Step, name: string): Promise<void> {
    switch (step.kind) {
      case 'redis-pause':
        this.later(this.redisCall(['debug', 'sleep', String(faultMs / 1000)]));
        break;
      case 'redis-restart':
        // Awaited: a second restart must not start a second server on the port.
        await this.redis.down();
        await sleep(300);
        await this.redis.up();
        break;
      case 'redis-full':
        await this.redisCall(['config', 'set', 'maxmemory', '1']);
        this.later(sleep(faultMs).then(() => this.redisCall(['config', 'set', 'maxmemory', '0'], true)));
        break;
      case 'socket-cut':
        this.disruptions.push({ at: Date.now(), kind: 'cut' });
        await this.daemon.fault(step.kind, name, step.slot);
        break;
      case 'daemon-freeze':
        this.later(this.daemon.fault(step.kind, name, step.slot));
        break;
      case 'replica-kill': {
        const victim = this.replicas[Math.max(0, step.slot) % this.replicas.length]!;
        this.killed.add(victim);
        this.disruptions.push({ at: Date.now(), kind: 'kill' });
        await victim.kill();
        this.replicas.splice(this.replicas.indexOf(victim), 1, this.replica());
        break;
      }
      case 'bad-frame':
      case 'forged-shutdown':
        await this.daemon.fault(step.kind, name, step.slot);
        break;
      default:
        throw new Error(`not a fault: ${step.kind}`);
    }
  }

  private later(p: Promise<unknown>): void {
    this.background.push(p.catch(() => {}));
  }

  /**
   * One Redis command on a connection of its own; `persist` retries until it is done (undoing a
   * fault must not be lost to a restart going on at the same moment).
   */
  private async redisCall(args: string[], persist = false): Promise<void> {
    for (;;) {
      const c = new Redis(this.redis.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      c.on('error', () => {});
      try {
        await c.connect();
        await c.call(args[0]!, ...args.slice(1));
        return;
      } catch (err) {
        if (!persist) throw err;
        await sleep(100);
      } finally {
        c.disconnect();
      }
    }
  }

  /** `reflex <args>` against this world's Redis and prefix; its stdout, or undefined when it failed. */
  private cli(args: string[]): Promise<string | undefined> {
    const child = spawn(process.execPath, [bin, ...args, '--config', '/dev/null', '--redis', this.redis.url, '--prefix', this.prefix], {
      env: hostEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    return new Promise((resolve) => child.once('exit', (code) => resolve(code === 0 ? out : undefined)));
  }

  private async settleAndObserve(
    prefix: string,
    started: number,
    incidents: Incident[],
    silences: SilenceWindow[],
    names: Set<string>,
  ): Promise<Observation> {
    await Promise.allSettled(this.background.splice(0));
    await this.ready();
    // Settled: a resync has run since the last step and the stream is read again (an Error is
    // found only by it), every frame the witness saw outside a gap has its audit record (a
    // subscriber holds what Redis refused in memory: empty queues alone say nothing), and both
    // queues are empty, and each Error (112) was found by a resync (it comes with no frame) or is
    // over, for 3 looks in a row. A frame still unaudited after the limit is lost.
    const resynced = Date.now() + resyncMs * 1.5;
    // A change with no frame at all (LXD drops the shutdown of an instance renamed in its stop hook)
    // is Reflex's only through a periodic resync, which reports it after its grace: until then an
    // instance whose daemon status is not the one last audited for it is waited for.
    const caughtUpBy = resynced + resyncGraceMs + 500;
    const gaps = this.gaps();
    const expected = this.witness.about(prefix).filter((f) => !gaps.some((g) => f.at >= g.from && f.at <= g.to));
    let quiet = 0;
    let audit: StoredAuditRecord[] = [];
    const limit = Date.now() + 30_000;
    while (quiet < 3 && Date.now() < limit) {
      await sleep(150);
      const counts = await Promise.all(this.queues.map((q) => q.getJobCounts('waiting', 'active', 'delayed', 'prioritized')));
      audit = await new AuditLog(this.connection, this.keys.audit).read({ since: new Date(started - 1_000) });
      const audited = new Set(audit.filter((r) => r.type === 'event').map((r) => r.correlationId));
      const errorsSeen = await Promise.all(incidents.filter((i) => i.kind === 'error').map((i) => this.errorSeen(i, audit)));
      const idle =
        counts.every((c) => Object.values(c).every((n) => n === 0)) &&
        expected.every((f) => audited.has(f.id)) &&
        errorsSeen.every(Boolean) &&
        (Date.now() >= caughtUpBy || (await this.caughtUp(names, audit)));
      quiet = Date.now() >= resynced && idle ? quiet + 1 : 0;
    }
    // An incident alert still firing gets one more sweep (the worker's, every resync interval) to
    // end, if its instance runs again or is gone: what it still fires after that counts.
    const unended = () => {
      const alerts = audit.filter((r) => r.type === 'alert' && String(r.kind ?? '').startsWith('instance.'));
      const ended = new Set(alerts.filter((r) => r.resolved === true).map((r) => String(r.fingerprint)));
      return alerts.some((r) => r.resolved !== true && !ended.has(String(r.fingerprint)));
    };
    for (const sweptBy = Date.now() + resyncMs * 1.5; unended() && Date.now() < sweptBy;) {
      await sleep(150);
      audit = await new AuditLog(this.connection, this.keys.audit).read({ since: new Date(started - 1_000) });
    }
    // Their logs are kept only until the next history's gaps are known; the takeovers logged since
    // the last look are kept first (a takeover logged during settling and dropped here left the
    // former holder on record: when it was killed next, no replica was ever seen holding the lease).
    this.scanLeases();
    if (!process.env.CHAOS_DEBUG) for (const p of this.replicas) p.logs.splice(0);
    const final = [];
    for (const n of names) {
      const now = await this.operator.show(n);
      if (now) final.push({ name: n, ...now });
    }
    return {
      calls: this.daemon.calls(started, prefix, audit),
      incidents,
      silences,
      audit: audit.filter((r) => r.type === 'event' || (r.instance ?? '').startsWith(prefix)),
      frames: this.witness.about(prefix),
      final,
      orderSlackMs: this.daemon.orderSlackMs,
      died: [...this.died],
      gaps,
    };
  }
}
