import type { Queue } from 'bullmq';
import type { AuditLog } from '../audit/audit-log.js';
import type { InstanceClient } from '../client/client.js';
import { ReflexError } from '../errors/reflex-error.js';
import type { InstanceRef } from '../redis/key-space.js';
import { identityOf, type InstanceIdentity } from './instance-identity.js';
import type { OperatorOrigin } from './operator-actions.js';

/** An instance as an operator names it (the console's JSON body, `reflex heal`'s arguments). */
export interface InstanceRequest {
  /** A configured target: its id (URL) or its name. */
  target: string;
  project: string;
  instance: string;
}

/** A configured target as a request may name it, with the client that reads its instances. */
export interface RequestTarget {
  id: string;
  name: string;
  client?: InstanceClient;
}

/**
 * Why a request was refused: `invalid` input (HTTP 400, a usage error), a `missing` instance
 * (404), or a target that did not answer the read (503, unavailable).
 */
export type RequestProblem = { problem: 'invalid' | 'missing' | 'unreachable'; error: string };

/** Instance names as LXD and Incus accept them: a host name label (letters, digits, `-`; a letter first). */
const instanceName = /^[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
/** Project names: no `/`, no white space, not `.` or `..` (they are path segments of the API). */
const projectName = /^(?!\.{1,2}$)[^\s/]{1,63}$/;

/**
 * Checks the names of a request and resolves its target (by id or name) to a configured one;
 * answers the instance it names, or why it is refused (`invalid`) before anything is queued.
 */
export function checkInstanceRequest(
  targets: readonly RequestTarget[],
  req: InstanceRequest,
): { ref: InstanceRef; target: RequestTarget } | RequestProblem {
  const target = targets.find((t) => t.id === req.target) ?? targets.find((t) => t.name === req.target);
  if (!target)
    return {
      problem: 'invalid',
      error: `target: ${JSON.stringify(req.target)} is not a configured target (configured: ${targets.map((t) => (t.name === t.id ? t.id : `${t.name} (${t.id})`)).join(', ')})`,
    };
  if (!projectName.test(req.project)) return { problem: 'invalid', error: `project: ${JSON.stringify(req.project)} is not a valid project name` };
  if (!instanceName.test(req.instance))
    return {
      problem: 'invalid',
      error: `instance: ${JSON.stringify(req.instance)} is not a valid instance name (letters, digits and -, a letter first, at most 63)`,
    };
  return { ref: { target: target.id, project: req.project, instance: req.instance }, target };
}

/**
 * {@link checkInstanceRequest}, then reads the instance from its target: a heal is queued only for
 * an instance that exists now (an unknown name would otherwise be retried, dead-lettered and
 * alerted on as if a healthy fleet had failed). Answers its identity as read: the heal is for that
 * instance, not for whatever has its name when a worker takes the job (deleted and re-created,
 * or renamed over, in between).
 */
export async function checkHealRequest(
  targets: readonly RequestTarget[],
  req: InstanceRequest,
  opts: { signal?: AbortSignal } = {},
): Promise<{ ref: InstanceRef; identity: InstanceIdentity } | RequestProblem> {
  const checked = checkInstanceRequest(targets, req);
  if ('problem' in checked) return checked;
  const { ref, target } = checked;
  if (!target.client) return { problem: 'unreachable', error: `target ${target.name}: no client to read ${ref.project}/${ref.instance} with` };
  try {
    const instance = await target.client.withProject(ref.project).getInstance(ref.instance, { signal: opts.signal });
    return { ref, identity: identityOf(instance.value) };
  } catch (err) {
    if (err instanceof ReflexError && err.code === 'API_NOT_FOUND')
      return { problem: 'missing', error: `no instance ${ref.instance} in project ${ref.project} on ${target.name}` };
    return { problem: 'unreachable', error: `cannot read ${ref.project}/${ref.instance} on ${target.name}: ${(err as Error).message}` };
  }
}

/**
 * Withdraws a queued heal that no worker has taken (waiting, never processed): removes its job and
 * audits why, so it does not start the instance hours later when a worker comes, long after the
 * operator was told it failed. Answers false when a worker has it (running, in a retry's back-off,
 * finished): then it runs its course.
 */
export async function withdrawUnclaimedHeal(
  deps: { queue: Queue; audit: AuditLog },
  heal: { jobId: string; correlationId: string; ref: InstanceRef; by: OperatorOrigin },
  reason: string,
): Promise<boolean> {
  const job = await deps.queue.getJob(heal.jobId);
  if (!job || job.processedOn !== undefined || !['waiting', 'prioritized'].includes(await job.getState())) return false;
  try {
    await job.remove();
  } catch {
    return false; // locked: a worker took it in between
  }
  const { ref, by } = heal;
  await deps.audit.append({
    type: 'decision',
    correlationId: heal.correlationId,
    target: ref.target,
    instance: ref.instance,
    rule: 'heal',
    summary: `withdrawn: the heal of ${ref.project}/${ref.instance} asked by ${by.actor} was not started, ${reason}`,
    matched: false,
    origin: by.origin,
    actor: by.actor,
  });
  return true;
}
