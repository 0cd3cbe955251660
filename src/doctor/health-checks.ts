import { Queue } from 'bullmq';
import type { Config } from '../config/config.js';
import { connectRedis, withDeadline } from '../redis/connect.js';
import { DeploymentId } from '../redis/deployment-id.js';
import { keySpace } from '../redis/key-space.js';
import type { DoctorCheck } from './doctor-check.js';

/** How long each read (a queue's state, /readyz) may take. */
const timeoutMs = 3_000;

/**
 * The queues of the deployment, read from Redis: one line each, failed while it is paused (none of
 * its jobs runs), a warning while no worker consumes it (no `reflex run` with a role that does is
 * connected). The notification queues are checked for a pause only: without receivers nothing consumes them.
 * Nothing when Redis cannot be reached (the `redis` check says so).
 */
export async function checkQueues(config: Config): Promise<DoctorCheck[]> {
  let redis;
  try {
    redis = await connectRedis(config.redisUrl, { timeoutMs });
  } catch {
    return [];
  }
  const keys = keySpace(config.prefix);
  const queues = [
    { name: keys.eventsQueue, prefix: keys.bullPrefix, consumer: 'worker' },
    { name: keys.actionsQueue, prefix: keys.bullPrefix, consumer: 'worker' },
    { name: keys.schedules.queue, prefix: keys.bullPrefix, consumer: 'scheduler' },
    { name: keys.notify.flushQueue, prefix: keys.notify.bullPrefix },
    { name: keys.notify.deliveryQueue, prefix: keys.notify.bullPrefix },
  ];
  try {
    return await Promise.all(
      queues.map(async ({ name, prefix, consumer }) => {
        const queue = new Queue(name, { connection: redis, prefix });
        try {
          const check = `queue:${name}`;
          const paused = await withDeadline(queue.isPaused(), timeoutMs);
          const workers = consumer ? await withDeadline(queue.getWorkersCount(), timeoutMs).catch(() => undefined) : undefined;
          const consuming = workers === undefined ? '' : `, ${workers} worker(s) consuming`;
          if (paused)
            return {
              name: check,
              ok: false,
              detail: `paused: none of its jobs runs${consuming}`,
              fix: 'resume it in the queues page of the dashboard (/dashboard/queues, with the write token)',
            };
          if (workers === 0)
            return {
              name: check,
              ok: true,
              warning: true,
              detail: `not paused, but no worker consumes it: its jobs wait`,
              fix: `start reflex run with the ${consumer} role (or all)`,
            };
          return { name: check, ok: true, detail: `not paused${consuming}` };
        } catch (err) {
          return { name: `queue:${name}`, ok: false, detail: `could not read the queue: ${(err as Error).message}` };
        } finally {
          await queue.close();
        }
      }),
    );
  } finally {
    redis.disconnect();
  }
}

/**
 * What the Reflex of this deployment says of itself: its /readyz at `httpHost:httpPort`, one line
 * per failing check (a lost event stream, stopped workers… as that process sees them). Reported
 * only when the answer names this deployment (the id kept in this Redis under this prefix,
 * redis/deployment-id.ts): a Reflex of another Redis or prefix on that address, or one that does
 * not say which it is, is a warning that says so, never its readiness. A warning too when nothing
 * answers there.
 */
export async function checkReadiness(config: Config): Promise<DoctorCheck[]> {
  if (config.httpPort === 0) return [];
  const host = ['0.0.0.0', '::', ''].includes(config.httpHost) ? '127.0.0.1' : config.httpHost;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${config.httpPort}/readyz`;
  let body: { deployment?: unknown; checks?: Record<string, { ok: boolean; detail: string }> };
  let status: number;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    status = res.status;
    body = (await res.json()) as typeof body;
  } catch (err) {
    return [
      {
        name: 'readyz',
        ok: true,
        warning: true,
        detail: `no Reflex answers at ${url} (${(err as Error).message}): its event stream and workers are not checked`,
        fix: 'run the doctor where reflex run runs, with its httpHost and httpPort',
      },
    ];
  }
  const foreign = await foreignAnswer(config, url, body.deployment);
  if (foreign) return [foreign];
  const failing = Object.entries(body.checks ?? {}).filter(([, c]) => !c.ok);
  if (status === 200 && failing.length === 0)
    return [{ name: 'readyz', ok: true, detail: `${url}: ready (${Object.keys(body.checks ?? {}).join(', ')})` }];
  if (failing.length === 0) return [{ name: 'readyz', ok: false, detail: `${url} answered ${status}` }];
  return failing.map(([name, c]) => ({
    name: `readyz:${name}`,
    ok: false,
    detail: c.detail,
    fix: `${url} is not ready (docs/operations.md, Readiness)`,
  }));
}

/** Why the answer at `url` is not this deployment's to report, or undefined when it is: its id is the one this Redis holds under this prefix. */
async function foreignAnswer(config: Config, url: string, answered: unknown): Promise<DoctorCheck | undefined> {
  const notReported = (detail: string): DoctorCheck => ({
    name: 'readyz',
    ok: true,
    warning: true,
    detail: `${detail}: its readiness is not reported, and this deployment's event stream and workers are not checked`,
    fix: `give the doctor the configuration of the reflex run serving this deployment (same Redis and prefix ${config.prefix}, its httpHost and httpPort)`,
  });
  if (typeof answered !== 'string') return notReported(`the Reflex at ${url} does not say which deployment it belongs to (an older Reflex)`);
  let ours: string | undefined;
  let redis;
  try {
    redis = await connectRedis(config.redisUrl, { timeoutMs });
    ours = await withDeadline(new DeploymentId(redis, keySpace(config.prefix).deployment).read(), timeoutMs);
  } catch (err) {
    return notReported(`cannot tell whether the Reflex at ${url} belongs to this deployment (Redis: ${(err as Error).message})`);
  } finally {
    redis?.disconnect();
  }
  if (ours === answered) return undefined;
  return notReported(
    ours === undefined
      ? `the Reflex at ${url} belongs to another deployment: no Reflex has run on this Redis with prefix ${config.prefix}`
      : `the Reflex at ${url} belongs to another deployment (another Redis, or another prefix than ${config.prefix})`,
  );
}
