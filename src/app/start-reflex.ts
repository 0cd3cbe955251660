import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import type { EventSubscriber } from '../events/event-subscriber.js';
import type { SubscriberLease } from '../events/subscriber-lease.js';
import type { RunningTargetReader } from '../events/target-reader.js';
import type { RunningHttpServer } from '../http/http-server.js';
import type { ProbeRunner } from '../probes/probe-runner.js';
import { installProcessGuards } from '../log/process-guards.js';
import type { Metrics } from '../metrics/metrics.js';
import type { ReloadOutcome, ReloadRequest, RuleSet } from '../rules/rule-set.js';
import type { RoleRoot } from './role-root.js';
import { startSchedulerRoot } from './scheduler-root.js';
import { startServing } from './serving.js';
import { openSharedParts } from './shared-parts.js';
import { startSubscriberRoot, type SubscriberRoot } from './subscriber-root.js';
import { startWorkerRoot } from './worker-root.js';

/** A running Reflex process (all roles or some), as started by `reflex run`, the demo or a test. */
export interface ReflexHandle {
  /** Stops taking new work, lets jobs in progress finish, closes connections. */
  stop(): Promise<void>;
  /** Runs a resync of every target now (subscriber role only). */
  resync(): Promise<void>;
  /** The first target's subscriber and lease (subscriber role); `readers` has every target's. */
  subscriber?: EventSubscriber;
  lease?: SubscriberLease;
  /** The first target's id; `targets` lists every one. */
  target: string;
  /** The id (URL) of every configured target. */
  targets: string[];
  /** One reader per target (subscriber role only). */
  readers: RunningTargetReader[];
  /** This process's metrics (served on /metrics). */
  metrics: Metrics;
  /** The HTTP server (/metrics, /healthz, /readyz, /dashboard); none when `httpPort` is 0 or the port could not be bound. */
  http?: RunningHttpServer;
  /** The health probes' runner (scheduler role). */
  probes?: ProbeRunner;
  /** The rules, schedules and receivers in force (worker and scheduler roles). */
  ruleSet?: RuleSet;
  /**
   * Reloads the rule set (SIGHUP, `reflex rules reload`): taken whole or refused whole, the running
   * set kept (see {@link RuleSet.reload}). Undefined for a role that holds no rules (subscriber).
   */
  reload?: (request: ReloadRequest) => Promise<ReloadOutcome>;
}

/**
 * Starts Reflex in the configured role: the shared parts, then the root of each role it runs
 * (`all` runs the three), then what every role serves (/readyz over what the roots run, HTTP).
 */
export async function startReflex(config: Config, logger: Logger): Promise<ReflexHandle> {
  installProcessGuards(logger);
  const shared = await openSharedParts(config, logger);
  const runs = (role: Config['role']) => config.role === 'all' || config.role === role;
  const roots: RoleRoot[] = [];
  const stop = async () => {
    for (const root of roots) await root.stop();
    await shared.close();
  };
  try {
    const subscriber: SubscriberRoot | undefined = runs('subscriber') ? await startSubscriberRoot(shared) : undefined;
    if (subscriber) roots.push(subscriber);
    if (runs('worker')) roots.push(await startWorkerRoot(shared));
    const scheduler = runs('scheduler') ? await startSchedulerRoot(shared) : undefined;
    if (scheduler) roots.push(scheduler);
    const serving = await startServing(shared, roots);
    const readers = subscriber?.readers ?? [];
    return {
      subscriber: readers[0]?.subscriber,
      lease: readers[0]?.lease,
      target: shared.targets[0]!.id,
      targets: shared.targets.map((t) => t.id),
      readers,
      metrics: shared.metrics,
      http: serving.http,
      ruleSet: shared.ruleSet,
      probes: scheduler?.probes,
      reload: serving.reload,
      resync: async () => void (await Promise.all(readers.map((r) => r.resync()))),
      async stop() {
        await serving.stop();
        await stop();
      },
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
