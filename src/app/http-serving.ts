import { DashboardUsers } from '../http/dashboard-users.js';
import { readClientSecret } from '../http/login/oidc-login.js';
import { startHttpServer, type RunningHttpServer } from '../http/http-server.js';
import type { ReadinessChecks } from '../http/readiness.js';
import type { DeploymentId } from '../redis/deployment-id.js';
import { HttpEndpoints } from '../redis/http-endpoints.js';
import { Silences } from '../silences/silences.js';
import type { Sending } from './sending.js';
import type { SharedParts } from './shared-parts.js';

/**
 * The HTTP server of a process (/metrics, /healthz, /readyz, the inbound webhooks, the
 * dashboard), announced among the deployment's endpoints; none when `httpPort` is 0. The inbound
 * webhooks are served when a token or secret is configured (every role serves them: any replica
 * behind the address Alertmanager posts to queues the alerts), the dashboard when its token is.
 */
export async function startHttpServing(
  s: SharedParts,
  sending: Sending,
  ready: ReadinessChecks,
  deployment: DeploymentId,
): Promise<{ http?: RunningHttpServer; stop(): Promise<void> }> {
  const { config, keys, redis, logger } = s;
  if (config.httpPort <= 0) return { stop: async () => undefined };
  const { notifier } = sending;
  // The users file is followed: a user removed from it is signed out at their next request.
  const users =
    config.dashboardUsersFile === undefined
      ? undefined
      : DashboardUsers.fromFile(config.dashboardUsersFile, {
          watch: true,
          onReload: (r) =>
            'error' in r
              ? logger.error({ err: r.error }, 'dashboard: the users file changed but is refused; the previous users stay')
              : logger.info({ users: r.users }, 'dashboard: users file reloaded'),
        });
  const http = await startHttpServer({
    host: config.httpHost,
    port: config.httpPort,
    metrics: s.metrics,
    logger,
    readiness: ready,
    deployment: () => deployment.claim(),
    allowedHosts: config.httpAllowedHosts,
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
              targets: new Map(s.targets.flatMap((t) => [[t.name, t.id] as [string, string], [t.id, t.id] as [string, string]])),
              instanceLabels: config.inbound?.instanceLabels,
              projectLabel: config.inbound?.projectLabel,
              targetLabel: config.inbound?.targetLabel,
            },
          }
        : undefined,
    dashboard:
      config.dashboardToken || config.dashboardUsersFile || config.dashboardOidc
        ? {
            token: config.dashboardToken,
            writeToken: config.dashboardWriteToken,
            users: users,
            writeTokenWithUsers: config.dashboardSharedWritesWithUsers,
            sessionTtlMs: config.dashboardSessionTtlMs,
            lockout: config.dashboardLockout,
            oidc: config.dashboardOidc && { ...config.dashboardOidc, clientSecret: readClientSecret(config.dashboardOidc) },
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
  });
  const leave = new HttpEndpoints(redis, keys.httpReplicas).announce(http.url);
  return {
    http,
    async stop() {
      users?.close();
      await http.close();
      await leave();
    },
  };
}
