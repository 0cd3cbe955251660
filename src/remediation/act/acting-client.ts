import type { ActionOutcome } from '../../actions/action.js';
import type { ActionJob } from '../../actions/action-job.js';
import { ActingTransport, dryRunWatch, type CallWatch, type SentRequest } from '../../client/acting-transport.js';
import { ApiError } from '../../client/api-error.js';
import type { InstanceClient } from '../../client/client.js';
import type { OperationObject } from '../../client/envelope.js';
import type { Response } from '../../client/transport.js';
import { ReflexError } from '../../errors/reflex-error.js';
import { OWN_OPERATION_MAX_MS } from '../../events/intent.js';
import type { OwnOperations } from '../../events/own-operations.js';
import type { RedisConnection } from '../../redis/connect.js';
import type { InstanceRef, KeySpace } from '../../redis/key-space.js';
import type { HeldLock } from '../../redis/token-lock.js';
import type { Trail } from '../trail.js';
import { recordInflight } from './inflight.js';

/** What the acting client of a job writes to. */
export interface ActingDeps {
  ownOperations: OwnOperations;
  redis: RedisConnection;
  keys: KeySpace;
}

/** The run of a job an acting client sends for. */
export interface ActingRun {
  job: ActionJob;
  jobId: string;
  attempt: number;
  /** The instance's lock; none for actions that do not touch the instance. */
  held?: HeldLock;
  /** The incident's trail, where each call is recorded. */
  trail: Trail;
}

/** The acting client of a run. */
export interface Acting {
  client: InstanceClient;
  /** The acting client, with `record`'s fields in each of its calls' audit records. */
  noting(record: Record<string, unknown>): InstanceClient;
  /** The outcome of an action its dry-run stopped at its first mutating request; undefined for any other error. */
  dryRunOutcome(err: unknown): ActionOutcome | undefined;
}

/**
 * The client an action acts with: every mutating request it sends (through any of the client's
 * calls, or its transport) is checked against the instance lock's fencing token in Redis just
 * before it leaves (LOCK_LOST, nothing sent, when another holder has it), marked as Reflex's own
 * operation before and after (so its events are `self`), audited with the path really sent and
 * its operation, and its operation id persisted before anyone waits on it (a killed worker resumes
 * it). Waits on its operations end within {@link OWN_OPERATION_MAX_MS}. In dry-run nothing is
 * sent: the first mutating request is audited as what it would do and refused (DRY_RUN_REFUSED).
 */
export function actingClient(deps: ActingDeps, run: ActingRun, client: InstanceClient): Acting {
  let refused: SentRequest | undefined;
  const watch: CallWatch = run.job.dryRun
    ? dryRunWatch(async (req) => {
        refused ??= req;
        await run.trail.call(`dry-run: would ${described(req, run.job)}`, { ...callFields(req, run.job), dryRun: true });
      })
    : new OwnCalls(deps, run);
  const transport = new ActingTransport(client.transport, watch);
  return {
    client: client.through(transport),
    noting: (record) => client.through(transport.noting(record)),
    dryRunOutcome: (err) =>
      refused && err instanceof ReflexError && err.code === 'DRY_RUN_REFUSED'
        ? { result: 'dry-run', summary: `would ${described(refused, run.job)}` }
        : undefined,
  };
}

const described = (req: SentRequest, job: Pick<ActionJob, 'action'>) => `${req.method} ${req.path} (${callAction(req, job)})`;

/** The fields of a call's audit record: what the caller noted, an exec's command, the method and path sent. */
const callFields = (req: SentRequest, job: Pick<ActionJob, 'action'>) => ({
  ...req.note,
  ...(callAction(req, job) === 'exec' ? { command: (req.body as { command?: unknown }).command } : {}),
  method: req.method,
  path: req.path,
});

/** A call of Reflex's in flight: what its end is recorded with. */
interface Sent {
  action: string;
  sentAt: number;
  createdAt: number;
}

/** The watch of a run that really sends: lock, own operations, audit, in-flight record. */
class OwnCalls implements CallWatch {
  readonly waitLimitMs = OWN_OPERATION_MAX_MS;
  private readonly sent = new Map<string, Sent>();
  private readonly ref: InstanceRef;
  private calls = 0;

  constructor(
    private readonly deps: ActingDeps,
    private readonly run: ActingRun,
  ) {
    this.ref = { target: run.job.target, project: run.job.project, instance: run.job.instance };
  }

  async send(req: SentRequest, send: () => Promise<Response>): Promise<Response> {
    const { ownOperations, redis, keys } = this.deps;
    const { job, jobId, attempt, held, trail } = this.run;
    const action = callAction(req, job);
    const said = described(req, job);
    const record = { ...callFields(req, job), attempt };
    const localId = `local:${jobId}:${attempt}:${action}:${++this.calls}`;
    const sentAt = Date.now();
    // Both before the request leaves, in one round trip (one connection, in this order): the
    // fencing token asked of Redis now, not the last renewal's word (a lock another holder took a
    // moment ago refuses this call; Redis unreachable: the last renewal's, within its TTL), and the
    // mark as Reflex's own. A refused call's mark is taken back: nothing was sent.
    const [ours] = await Promise.all([
      held?.confirm().catch(() => undefined),
      ownOperations.record(this.ref, localId, { action, state: 'sending', sentAt, job: jobId }),
    ]);
    if (held) {
      try {
        held.check();
        if (ours === false) throw new ReflexError('LOCK_LOST', `lock ${held.key} is not ours any more; ${said} not sent`);
      } catch (err) {
        await redis.hdel(keys.ownOperations(this.ref), localId).catch(() => undefined);
        throw err;
      }
    }
    let res: Response;
    try {
      res = await send();
    } catch (err) {
      await ownOperations.record(this.ref, localId, { action, state: 'failed', sentAt, endedAt: Date.now(), job: jobId });
      if (err instanceof ApiError) await trail.call(`${said} refused: ${err.message}`, { ...record, status: err.status });
      throw err;
    }
    if (res.kind === 'sync') {
      await ownOperations.record(this.ref, localId, { action, state: 'done', sentAt, endedAt: Date.now(), job: jobId });
      await trail.call(`${said} → done`, record);
      return res;
    }
    const op = res.envelope.metadata;
    const createdAt = daemonTime(op.created_at) ?? sentAt;
    this.sent.set(op.id, { action, sentAt, createdAt });
    // The in-flight record first: a worker that dies between the two leaves a job that resumes
    // waiting on the operation, and the mark of the call as sent by this job (the next run of the
    // job finds it, settled by neither).
    await recordInflight(redis, keys, jobId, { operationId: op.id, action, sentAt, createdAt });
    await ownOperations.record(this.ref, op.id, { action, state: 'running', sentAt, createdAt, job: jobId }, localId);
    await trail.call(`${said} → operation ${op.id}`, { ...record, operationId: op.id });
    return res;
  }

  async ended(op: OperationObject): Promise<void> {
    const sent = this.sent.get(op.id);
    if (!sent) return;
    // LXD 5.0.2 leaves updated_at at the creation time when an operation ends (a forced restart:
    // Success 0.7 s after its updated_at, and its instance-restarted event with it): the end is at
    // least the time waited, counted on the daemon's clock from its created_at.
    const waited = sent.createdAt + (Date.now() - sent.sentAt);
    await this.deps.ownOperations.record(this.ref, op.id, {
      job: this.run.jobId,
      action: sent.action,
      state: op.status_code === 200 ? 'done' : 'failed',
      sentAt: sent.sentAt,
      createdAt: sent.createdAt,
      endedAt: Math.max(daemonTime(op.updated_at) ?? waited, waited),
    });
  }
}

const instanceCall = /^\/1\.0\/instances\/[^/?]+(\/[^/?]+)?(\/[^?]*)?(\?|$)/;

/**
 * What a request does, as own operations and the audit name it: the verb of a state change, a
 * snapshot's, a restore, an exec; any other request by the action that sends it (patch-config, api-call).
 * The echoes Reflex takes for its own are chosen by this name (events/intent.ts).
 */
export function callAction(req: SentRequest, job: Pick<ActionJob, 'action'>): string {
  const m = instanceCall.exec(req.path);
  const body = (req.body ?? {}) as { action?: unknown; restore?: unknown };
  if (!m) return job.action;
  const sub = m[1];
  if (sub === '/state' && req.method === 'PUT' && typeof body.action === 'string') return body.action;
  if (sub === '/snapshots' && req.method === 'POST' && !m[2]) return 'snapshot';
  if (sub === '/snapshots' && req.method === 'DELETE') return 'delete-snapshot';
  if (sub === '/exec' && req.method === 'POST') return 'exec';
  if (!sub && req.method === 'PUT' && typeof body.restore === 'string') return 'restore';
  if (!sub && req.method === 'DELETE') return 'delete';
  return job.action;
}

/** A time the daemon wrote, in ms; undefined when absent or not a time. */
export function daemonTime(s: string | undefined): number | undefined {
  const ms = s ? Date.parse(s) : Number.NaN;
  return Number.isNaN(ms) ? undefined : ms;
}
