import { Queue } from 'bullmq';
import type { Config } from '../config/config.js';
import { connectRedis, withDeadline } from '../redis/connect.js';
import { DeploymentId } from '../redis/deployment-id.js';
import { HttpEndpoints } from '../redis/http-endpoints.js';
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
 * redis/deployment-id.ts): a Reflex of another Redis or prefix on that address, one that does not
 * say which it is, or nothing answering there is a warning that says so, never another's
 * readiness; the doctor then reads the /readyz of a replica its own deployment announced
 * (redis/http-endpoints.ts), when one answers as this deployment.
 */
export async function checkReadiness(config: Config): Promise<DoctorCheck[]> {
  if (config.httpPort === 0) return [];
  const url = readyzUrl(`http://${config.httpHost.includes(':') ? `[${config.httpHost}]` : config.httpHost}:${config.httpPort}`);
  const [answer, own] = await Promise.all([readyz(url), ownDeployment(config)]);
  if (!('error' in answer) && own.id !== undefined && answer.body.deployment === own.id) return reported(url, answer);
  const warning = 'error' in answer ? silent(url, answer.error) : foreign(config, url, answer.body.deployment, own);
  for (const other of own.endpoints.map(readyzUrl).filter((u) => u !== url)) {
    const found = await readyz(other);
    if (!('error' in found) && own.id !== undefined && found.body.deployment === own.id) return [warning, ...reported(other, found)];
  }
  return [warning];
}

interface Readyz {
  status: number;
  body: { deployment?: unknown; checks?: Record<string, { ok: boolean; detail: string }> };
}

/** The /readyz URL of a server URL (`http://0.0.0.0:9464`: asked on 127.0.0.1). */
function readyzUrl(server: string): string {
  const u = new URL(server);
  if (['0.0.0.0', '[::]', ''].includes(u.hostname)) u.hostname = '127.0.0.1';
  u.pathname = '/readyz';
  return u.toString();
}

async function readyz(url: string): Promise<Readyz | { error: string }> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    return { status: res.status, body: (await res.json()) as Readyz['body'] };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/** This deployment's id and the URLs its replicas announced, as this Redis holds them under this prefix. */
async function ownDeployment(config: Config): Promise<{ id?: string; endpoints: string[]; error?: string }> {
  let redis;
  try {
    redis = await connectRedis(config.redisUrl, { timeoutMs });
    const keys = keySpace(config.prefix);
    const [id, endpoints] = await withDeadline(
      Promise.all([new DeploymentId(redis, keys.deployment).read(), new HttpEndpoints(redis, keys.httpReplicas).live()]),
      timeoutMs,
    );
    return { id, endpoints };
  } catch (err) {
    return { endpoints: [], error: (err as Error).message };
  } finally {
    redis?.disconnect();
  }
}

/** The checks of a /readyz that is this deployment's. */
function reported(url: string, { status, body }: Readyz): DoctorCheck[] {
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

function silent(url: string, error: string): DoctorCheck {
  return {
    name: 'readyz',
    ok: true,
    warning: true,
    detail: `no Reflex answers at ${url} (${error}): its event stream and workers are not checked`,
    fix: 'run the doctor where reflex run runs, with its httpHost and httpPort',
  };
}

/** Why the answer at `url` is not this deployment's to report. */
function foreign(config: Config, url: string, answered: unknown, own: { id?: string; error?: string }): DoctorCheck {
  const detail =
    typeof answered !== 'string'
      ? `the Reflex at ${url} does not say which deployment it belongs to (an older Reflex)`
      : own.error !== undefined
        ? `cannot tell whether the Reflex at ${url} belongs to this deployment (Redis: ${own.error})`
        : own.id === undefined
          ? `the Reflex at ${url} belongs to another deployment: no Reflex has run on this Redis with prefix ${config.prefix}`
          : `the Reflex at ${url} belongs to another deployment (another Redis, or another prefix than ${config.prefix})`;
  return {
    name: 'readyz',
    ok: true,
    warning: true,
    detail: `${detail}: its readiness is not reported`,
    fix: `give the doctor the configuration of the reflex run serving this deployment (same Redis and prefix ${config.prefix}, its httpHost and httpPort)`,
  };
}
