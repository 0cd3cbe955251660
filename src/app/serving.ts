import { startHttpServer, type RunningHttpServer } from '../http/http-server.js';
import { readiness } from '../http/readiness.js';
import { ReloadListener } from '../rules/reload-channel.js';
import type { ReloadOutcome, ReloadRequest } from '../rules/rule-set.js';
import { retentionPlan } from '../retention/structures.js';
import { startRedisWatch } from '../retention/redis-watch.js';
import { WriteProbe } from '../redis/write-probe.js';
import { Silences } from '../silences/silences.js';
import { StopList, type RoleRoot } from './role-root.js';
import type { SharedParts } from './shared-parts.js';
import { DashboardUsers } from '../http/dashboard-users.js';
import { DeploymentId } from '../redis/deployment-id.js';
import { HttpEndpoints } from '../redis/http-endpoints.js';

/** What every role serves once its roots run: the Redis watch, the reload listener, /readyz and the HTTP server. */
export interface Serving {
  http?: RunningHttpServer;
  /** Reloads the rule set; undefined for a process that holds no rules. */
  reload?: (request: ReloadRequest) => Promise<ReloadOutcome>;
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
 * Starts what every role serves, after its roots: the write probe (does Redis take writes? its
 * subscriber's, workers' and queues' refused writes make it probe at once), the Redis watch (every role samples Redis and
 * keeps the streams to their bounds; one replica alerts on each change of level; while writes are
 * refused, each replica with receivers alerts by the fallback path), the reload
 * listener (every replica holding rules answers `reflex rules reload`), the /readyz checks over
 * what the roots run, and the HTTP server.
 */
export async function startServing(s: SharedParts, roots: RoleRoot[]): Promise<Serving> {
  const { config, keys, redis, logger, notifier } = s;
  const stops = new StopList(logger);
  try {
    const roles = readinessOf(roots);
    // A change of the probe's verdict runs the watch's round at once: the alert of a Redis that
    // refuses writes must not wait for the retention interval.
    let watchNow: (() => void) | undefined;
    const writes = new WriteProbe({
      redis,
      key: keys.writeProbe,
      onChange: (state, previous) => {
        s.metrics.setRedisWritable(state.writable === true, state.refusal ?? 'unreachable');
        if (state.writable === false) logger.error({ refusal: state.refusal, error: state.error }, 'Redis does not take writes');
        else if (previous.writable === false) logger.info('Redis takes writes again');
        watchNow?.();
      },
    });
    writes.start();
    stops.add(async () => writes.stop());
    for (const w of roles.workers) {
      w.on('error', (err) => writes.suspect(err));
      w.on('failed', (_job, err) => writes.suspect(err));
    }
    for (const q of new Set([...roles.queues, s.eventsQueue, s.actionsQueue])) q.on('error', (err) => writes.suspect(err));
    for (const root of roots) root.reportWriteErrors?.((err) => writes.suspect(err));
    const watch = startRedisWatch({
      redis,
      plan: retentionPlan(config, keys),
      levelKey: keys.redisMemoryLevel,
      alertRatio: config.redisMemoryAlertRatio,
      intervalMs: config.retentionCheckMs,
      metrics: s.metrics,
      logger,
      alerts: s.alerts,
      writes,
    });
    watchNow = () =>
      void watch.check().catch((err: unknown) => logger.warn({ err }, 'Redis watch round after a write probe change failed; the next round alerts'));
    stops.add(() => watch.stop());
    const ruleSet = s.ruleSet;
    const reload = ruleSet && ((request: ReloadRequest) => ruleSet.reload(request));
    if (reload) {
      const listener = new ReloadListener({ redis, keys: keys.reload, logger, replica: s.replica, role: config.role, reload });
      await listener.start();
      stops.addFirst(() => listener.stop());
    }
    // /readyz checks every queue the roots' work goes through, fed or consumed: a pause, or no
    // worker consuming it anywhere, leaves crashes unhealed.
    const ready = readiness({ redis, ...roles, writes, streamLossGraceMs: config.streamLossGraceMs });
    // Named in /readyz, so `reflex doctor` reports only the endpoint of its own Redis and prefix.
    const deployment = new DeploymentId(redis, keys.deployment);
    await deployment.claim();
    s.metrics.watchHealth(() => ready.reading());
    const http =
      config.httpPort > 0
        ? await startHttpServer({
            host: config.httpHost,
            port: config.httpPort,
            metrics: s.metrics,
            logger,
            readiness: ready.checks,
            deployment: () => deployment.claim(),
            allowedHosts: config.httpAllowedHosts,
            // Every role serves it: any replica behind the address Alertmanager posts to queues the alerts.
            inbound:
              s.inbound.alertmanagerToken || s.inbound.webhookSecrets
                ? {
                    ...s.inbound,
                    queue: s.eventsQueue,
                    redis,
                    rejectedKey: keys.rejected,
                    rejectedLimits: s.rejectedLimits,
                    audit: s.audit,
                    logger,
                    maxBodyBytes: config.inbound?.maxBodyBytes,
                    toleranceSec: config.inbound?.toleranceSec,
                    mapping: {
                      defaultTarget: s.targets[0]!.id,
                      targets: new Map(
                        s.targets.flatMap(
                          (t) =>
                            [
                              [t.name, t.id],
                              [t.id, t.id],
                            ] as [string, string][],
                        ),
                      ),
                      instanceLabels: config.inbound?.instanceLabels,
                      projectLabel: config.inbound?.projectLabel,
                      targetLabel: config.inbound?.targetLabel,
                    },
                  }
                : undefined,
            dashboard: config.dashboardToken
              ? {
                  token: config.dashboardToken,
                  writeToken: config.dashboardWriteToken,
                  users: config.dashboardUsersFile ? DashboardUsers.fromFile(config.dashboardUsersFile) : undefined,
                  writeTokenWithUsers: config.dashboardSharedWritesWithUsers,
                  queues: [s.eventsQueue, s.actionsQueue],
                  audit: s.audit,
                  silences: new Silences(redis, keys.silences, s.audit),
                  alerts: notifier && (() => notifier.board.view(notifier.mute)),
                  target: s.targets.map((t) => t.id).join(', '),
                  console: {
                    redis,
                    keys,
                    prefix: config.prefix,
                    tracker: s.tracker,
                    targets: s.targets.map((t) => ({ id: t.id, name: t.name, client: s.clients.for(t.id) })),
                    actionsQueue: s.actionsQueue,
                    resolver: s.alerts,
                  },
                }
              : undefined,
          })
        : undefined;
    if (http) stops.addFirst(new HttpEndpoints(redis, keys.httpReplicas).announce(http.url));
    return {
      http,
      reload,
      async stop() {
        await http?.close();
        await stops.run();
      },
    };
  } catch (err) {
    await stops.run();
    throw err;
  }
}
