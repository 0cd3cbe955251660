import type { EventSubscriber } from '../events/event-subscriber.js';
import type { SubscriberLease } from '../events/subscriber-lease.js';
import type { RunningTargetReader } from '../events/target-reader.js';
import type { RunningHttpServer } from '../http/http-server.js';
import type { Metrics } from '../metrics/metrics.js';
import type { ProbeRunner } from '../probes/probe-runner.js';
import type { ReloadOutcome, ReloadRequest, RuleSet } from '../rules/rule-set.js';
import type { RoleRoot } from './role-root.js';
import type { Serving } from './serving.js';
import type { HeldParts, SharedParts } from './shared-parts.js';

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

/** The handle of a process whose roots and serving run; `stop` stops serving, then the roots and the shared parts. */
export function handleOf(s: SharedParts, held: HeldParts, roots: RoleRoot[], serving: Serving, stopRoots: () => Promise<void>): ReflexHandle {
  const readers = roots.flatMap((r) => r.readers ?? []);
  const { ruleSet } = held;
  return {
    subscriber: readers[0]?.subscriber,
    lease: readers[0]?.lease,
    target: s.targets[0]!.id,
    targets: s.targets.map((t) => t.id),
    readers,
    metrics: s.metrics,
    http: serving.http,
    ruleSet,
    probes: roots.find((r) => r.probes)?.probes,
    reload: ruleSet && ((request) => ruleSet.reload(request)),
    resync: async () => void (await Promise.all(readers.map((r) => r.resync()))),
    async stop() {
      await serving.stop();
      await stopRoots();
    },
  };
}
