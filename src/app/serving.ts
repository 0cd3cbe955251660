import type { RunningHttpServer } from '../http/http-server.js';
import { readiness } from '../http/readiness.js';
import { DeploymentId } from '../redis/deployment-id.js';
import { startHttpServing } from './http-serving.js';
import { StopList, type RoleRoot } from './role-root.js';
import { listenForReloads } from './rule-holding.js';
import type { HeldParts, SharedParts } from './shared-parts.js';
import { startWriteWatch } from './write-watch.js';

/** What every role serves once its roots run: the Redis watch, the reload listener, /readyz and the HTTP server. */
export interface Serving {
  http?: RunningHttpServer;
  /** Stops serving: the HTTP server first, then the reload listener and the Redis watch. */
  stop(): Promise<void>;
}

/** The readiness of every root together: each queue checked once, however many roots go through it. */
function readinessOf(roots: RoleRoot[]) {
  const parts = roots.map((r) => r.readiness);
  return {
    readers: parts.flatMap((p) => p.readers ?? []),
    workers: parts.flatMap((p) => p.workers ?? []),
    queues: [...new Set(parts.flatMap((p) => p.queues ?? []))],
    history: parts.find((p) => p.history)?.history,
  };
}

/**
 * Starts what every role serves, after its roots: the write probe and the Redis watch, the reload
 * listener (every replica holding rules answers `reflex rules reload`), the /readyz checks over
 * what the roots run (every queue their work goes through, fed or consumed: a pause, or no worker
 * consuming it anywhere, leaves crashes unhealed), and the HTTP server.
 */
export async function startServing(s: SharedParts, held: HeldParts, roots: RoleRoot[]): Promise<Serving> {
  const { config, redis, keys, logger } = s;
  const stops = new StopList(logger);
  try {
    const roles = readinessOf(roots);
    const watch = startWriteWatch(s, roots, roles);
    stops.add('the Redis watch', () => watch.stop());
    stops.addFirst('the reload listener', await listenForReloads(held.ruleSet, { redis, keys, logger, replica: s.replica, role: config.role }));
    const ready = readiness({ redis, ...roles, writes: watch.writes, streamLossGraceMs: config.streamLossGraceMs });
    // Named in /readyz, so `reflex doctor` reports only the endpoint of its own Redis and prefix.
    const deployment = new DeploymentId(redis, keys.deployment);
    await deployment.claim();
    s.metrics.watchHealth(() => ready.reading());
    const serving = await startHttpServing(s, held.sending, ready.checks, deployment);
    stops.addFirst('the HTTP server', () => serving.stop());
    return { http: serving.http, stop: () => stops.run() };
  } catch (err) {
    await stops.run();
    throw err;
  }
}
