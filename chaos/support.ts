import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { AuditLog, type StoredAuditRecord } from '../src/audit/audit-log.js';
import { InstanceClient } from '../src/client/client.js';
import { parseTarget } from '../src/client/target.js';
import { decodeFrame } from '../src/events/frame.js';
import { EventSubscriber } from '../src/events/event-subscriber.js';
import { frameId } from '../src/events/normalize.js';
import { redisFromUrl } from '../src/redis/connect.js';
import { keySpace, type KeySpace } from '../src/redis/key-space.js';
import type { RunningSimulator } from '../src/simulator/simulator.js';
import { startReflexProcess, type ReflexProcess } from '../test/support/reflex-process.js';
import { freePort } from '../test/support/free-port.js';
import { until } from '../test/support/wait.js';

/** What a scenario did and what it found; `ok` false fails the chaos run. */
export interface ScenarioResult {
  did: string;
  found: string[];
  ok: boolean;
}

/** Scenario size: the short run (CI) or the long one. */
export interface ChaosOptions {
  short: boolean;
  log: (line: string) => void;
}

export const rulesDir = fileURLToPath(new URL('../rules', import.meta.url));
export const optIn = { 'user.reflex.autorestart': 'true' };
export const silent = pino({ level: 'silent' });
export function newPrefix(label: string): string {
  return `chaos-${label}-${randomUUID().slice(0, 6)}`;
}

/** A redis-server on a fixed loopback port and data dir, so it can be stopped and started again (AOF on). */
export class RestartableRedis {
  private child: ChildProcess | undefined;
  private constructor(
    readonly port: number,
    private readonly dir: string,
  ) {}

  static async start(): Promise<RestartableRedis> {
    const r = new RestartableRedis(await freePort(), mkdtempSync(join(tmpdir(), 'reflex-chaos-redis-')));
    await r.up();
    return r;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async up(): Promise<void> {
    this.child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--save', '', '--appendonly', 'yes', '--daemonize', 'no'],
      { stdio: 'ignore' },
    );
    await until(
      'redis-server to answer',
      async () => {
        const c = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
        c.on('error', () => {});
        try {
          await c.connect();
          return (await c.ping()) === 'PONG';
        } catch {
          return false;
        } finally {
          c.disconnect();
        }
      },
      10_000,
      50,
    );
  }

  /** SIGTERM (Redis writes its AOF and exits), then waits for the exit. */
  async down(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }

  async stop(): Promise<void> {
    await this.down();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * `reflex run` as a process against the simulator, with the bundled rules and no periodic resync.
 * Storm control is off: the scenarios crash dozens of instances on one server and expect each back.
 * The start-time type-check of the rules is off too: a restart after a SIGKILL should take the time
 * a restart takes, not 2-6 s of CPU re-checking files `npm run typecheck` checks (docs/rules.md).
 * Nothing of a Reflex installed on this host reaches it: no HTTP server (the default port 9464 is
 * a real Reflex's), no /etc/reflex/config.yaml (`--config /dev/null`) and no REFLEX_* or REDIS_URL
 * from the environment (its receivers would get the scenarios' alerts).
 */
export function reflexRun(
  sim: Pick<RunningSimulator, 'socketPath'>,
  redisUrl: string,
  prefix: string,
  role: 'all' | 'subscriber' | 'worker',
  env: Record<string, string> = {},
  /** More options, after the defaults (a later one wins: `--resync-interval 1s`). */
  args: string[] = [],
): ReflexProcess {
  return startReflexProcess(
    [
      'run',
      '--config',
      '/dev/null',
      '--role',
      role,
      '--target',
      `unix://${sim.socketPath}`,
      '--redis',
      redisUrl,
      '--prefix',
      prefix,
      '--rules',
      rulesDir,
      '--resync-interval',
      '0',
      '--http-port',
      '0',
      '--no-typecheck',
      ...args,
    ],
    { ...hostEnv(), REFLEX_LOG_LEVEL: 'info', REFLEX_STORM_THRESHOLD: '0', ...env },
    { cleanEnv: true },
  );
}

/** This process's environment without what would configure a Reflex (REFLEX_*, REDIS_URL). */
export function hostEnv(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined && !e[0].startsWith('REFLEX_') && e[0] !== 'REDIS_URL'),
  );
}

/**
 * An independent reader of the simulator's event stream that remembers the id Reflex gives each
 * lifecycle frame: the ground truth of what must appear in the audit trail.
 */
export class FrameWitness {
  readonly ids = new Set<string>();
  private readonly client: InstanceClient;
  private readonly sub: EventSubscriber;

  constructor(sim: RunningSimulator) {
    const target = `unix://${sim.socketPath}`;
    this.client = new InstanceClient(parseTarget(target));
    this.sub = new EventSubscriber({
      endpoint: () => this.client.eventsEndpoint(['lifecycle'], { allProjects: true }),
      onFrame: (raw) => {
        const d = decodeFrame(raw);
        if (d.ok && d.frame.type === 'lifecycle') this.ids.add(frameId(target, d.frame));
      },
      logger: silent,
    });
  }

  async start(): Promise<void> {
    this.sub.start();
    await until('the witness to connect', () => this.sub.connected, 10_000, 20);
  }

  async stop(): Promise<void> {
    await this.sub.stop();
    await this.client.close();
  }
}

/** Reads a prefix's whole audit trail. */
export async function auditOf(redisUrl: string, keys: KeySpace): Promise<StoredAuditRecord[]> {
  const redis = redisFromUrl(redisUrl);
  try {
    return await new AuditLog(redis, keys.audit).read();
  } finally {
    redis.disconnect();
  }
}

/** Counts of the events queue, or of the actions queue (waiting, active, delayed, completed, failed). */
export async function eventQueueCounts(redisUrl: string, keys: KeySpace, queue: 'events' | 'actions' = 'events'): Promise<Record<string, number>> {
  const connection = redisFromUrl(redisUrl);
  const q = new Queue(queue === 'events' ? keys.eventsQueue : keys.actionsQueue, { connection, prefix: keys.bullPrefix });
  try {
    return (await q.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'completed', 'failed')) as Record<string, number>;
  } finally {
    await q.close();
    connection.disconnect();
  }
}

/**
 * Waits until the events queue and the actions queue are drained (nothing waiting, active or
 * delayed) for a moment. The actions queue matters after a SIGKILL: the job the killed worker held
 * stays active until its lock expires and BullMQ hands it to another worker, which resumes it and
 * writes its outcome.
 */
export async function drained(redisUrl: string, keys: KeySpace, timeoutMs: number): Promise<void> {
  let quiet = 0;
  await until(
    'the events and actions queues to drain',
    async () => {
      const counts = await Promise.all([eventQueueCounts(redisUrl, keys), eventQueueCounts(redisUrl, keys, 'actions')]);
      const c = Object.fromEntries(['waiting', 'active', 'delayed', 'prioritized'].map((k) => [k, (counts[0][k] ?? 0) + (counts[1][k] ?? 0)]));
      const busy = (c.waiting ?? 0) + (c.active ?? 0) + (c.delayed ?? 0) + (c.prioritized ?? 0);
      quiet = busy ? 0 : quiet + 1;
      return quiet >= 3;
    },
    timeoutMs,
    300,
  );
}

/**
 * The checks shared by the loss scenarios: every lifecycle frame the witness saw has an audit
 * `event` record, every crashed instance ended Running with exactly one start and an `outcome`
 * record, and no event job failed.
 */
export async function lossReport(
  sim: RunningSimulator,
  redisUrl: string,
  keys: KeySpace,
  witness: FrameWitness,
  crashed: string[],
): Promise<{ found: string[]; ok: boolean }> {
  const records = await auditOf(redisUrl, keys);
  const audited = new Set(records.filter((r) => r.type === 'event').map((r) => r.correlationId));
  const missing = [...witness.ids].filter((id) => !audited.has(id));
  const outcomes = new Set(records.filter((r) => r.type === 'outcome').map((r) => r.instance));
  const notRunning = crashed.filter((n) => sim.controls.statusCode(n) !== 103);
  const starts = crashed.map((n) => sim.controls.calls(n, 'start'));
  const duplicates = starts.filter((s) => s > 1).length;
  const noOutcome = crashed.filter((n) => !outcomes.has(n));
  const counts = await eventQueueCounts(redisUrl, keys);
  const found = [
    `${witness.ids.size} lifecycle events emitted, ${witness.ids.size - missing.length} with an audit record, ${missing.length} lost`,
    `${crashed.length} crashes: ${crashed.length - notRunning.length} Running again, ${starts.reduce((a, b) => a + b, 0)} start calls at the simulator, ${duplicates} instance(s) started more than once, ${noOutcome.length} without an outcome record${noOutcome.length ? ` (${noOutcome.slice(0, 5).join(', ')})` : ''}`,
    `events queue: ${counts.completed ?? 0} completed, ${counts.failed ?? 0} failed`,
  ];
  const ok = missing.length === 0 && notRunning.length === 0 && duplicates === 0 && noOutcome.length === 0 && (counts.failed ?? 0) === 0;
  return { found, ok };
}

export { keySpace };
