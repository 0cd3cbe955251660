import type { InstanceClient } from '../client/client.js';
import type { OperationObject } from '../client/envelope.js';
import { isFinalOperationCode } from '../client/status-code.js';
import type { OwnOperations } from '../events/own-operations.js';
import { parseSource } from '../events/source.js';
import type { ActionJob } from '../actions/action-job.js';
import type { Instance } from '../client/instance.js';
import { heldDownSince, incidentOnset, requestOf, type OperatorRequest, type OperatorRequests } from './operator-requests.js';

/**
 * Other people's operations on an instance, as an action sees them just before its call: it waits
 * (bounded) for them, so it acts on the settled state, and learns that it is superseded when the
 * operator's last state change among them since the instance last ran is a stop or a freeze, the
 * rule the re-check applies to the stream's record ({@link heldDownSince}), for one whose event
 * may not have been processed yet. The server lists every operation of the last seconds, whatever its instance; in a
 * storm of actions each listing would grow with the others, so actions on one target that ask
 * while a listing is in flight share it, indexed by instance once. A listing that has answered is
 * never reused: it cannot show a request sent since (a CI run met one 0.24 s old that predated an
 * operator's stop; the restart it let through was refused as busy, but a stop done within that
 * time would have been undone). An operation started between the listing and the call is caught by
 * the daemon's own instance lock: the call is refused as busy, and retried.
 */
export class OthersOperations {
  private readonly listings = new Map<string, Promise<OperationObject[]>>();
  private readonly index = new WeakMap<OperationObject[], Map<string, OperationObject[]>>();

  constructor(
    private readonly ownOperations: OwnOperations,
    private readonly requests: OperatorRequests,
  ) {}

  /** The server's operations, listed now, or by the listing for the same `key` (target and project) still in flight. */
  recent(client: InstanceClient, key: string): Promise<OperationObject[]> {
    const inFlight = this.listings.get(key);
    if (inFlight) return inFlight;
    const list = client.listOperations();
    this.listings.set(key, list);
    const answered = (): void => {
      if (this.listings.get(key) === list) this.listings.delete(key);
    };
    list.then(answered, answered);
    return list;
  }

  /**
   * Waits for the operations of `ops` on the job's instance that are still running; answers why
   * the job is superseded, if the operator's last request since the instance (as the re-check
   * read it) last started holds it down, and whether there were any (then the action reads the
   * instance's state again). Without a listing it answers `waited`: the listing is an
   * optimisation, and the action re-reads state then.
   */
  async settle(
    client: InstanceClient,
    job: ActionJob,
    ops: OperationObject[] | undefined,
    instance?: Pick<Instance, 'last_used_at'>,
  ): Promise<{ superseded?: string; waited: boolean }> {
    if (!ops) return { waited: true };
    const mine = this.on(ops, job.instance);
    if (!mine.length) return { waited: false };
    if (job.origin !== 'operator' && job.incidentAt !== undefined) {
      const since = instance ? incidentOnset(instance, job.incidentAt) : job.incidentAt;
      const operator = await this.holdingDown(job, mine, since);
      if (operator)
        return {
          superseded: `superseded: "${operator.description}" (operation ${operator.id}, not Reflex's) was requested at ${operator.created_at}, since the instance last started (${new Date(since).toISOString()}); an operator's decision is never undone`,
          waited: true,
        };
    }
    for (const op of mine) {
      if (isFinalOperationCode(op.status_code)) continue;
      try {
        await (await client.getOperation(op.id)).wait({ timeoutMs: 30_000 });
      } catch {
        // Its failure is its own business; the action re-reads the state next.
      }
    }
    return { waited: true };
  }

  /**
   * After an action of Reflex's brought the instance up: the operator's request, sent while it ran,
   * that holds the instance down. The daemon refuses a stop that meets a start in flight ("The
   * instance is already stopped", or "Instance is busy running a "start" operation": LXD 5.0.2 and
   * Incus 6.0, measured), and no re-check before the call can see a request sent after it. Read
   * once the action's operation has ended, from the requests the stream recorded
   * ({@link OperatorRequests}: a refused operation leaves the daemon's listing 5 s after it ended,
   * a start may take longer) and a listing taken now (not a shared one: the stream's frame of a
   * request just sent may not be processed yet): the operator's last state change since `since`
   * (as {@link settle} reads it), when it is a stop or a freeze. A listing that fails is told to
   * `listingFailed` and leaves the records; a failing Redis throws.
   */
  async heldDownMeanwhile(
    client: InstanceClient,
    job: ActionJob,
    since: number,
    listingFailed: (err: unknown) => void,
  ): Promise<OperatorRequest | undefined> {
    const ref = { target: job.target, project: job.project, instance: job.instance };
    const [ops, recorded, own] = await Promise.all([
      client.listOperations().catch((err: unknown) => {
        listingFailed(err);
        return [] as OperationObject[];
      }),
      this.requests.list(ref),
      this.ownOperations.ids(ref),
    ]);
    const requests = new Map(recorded.map((r) => [r.operationId, r]));
    // The listing's state of an operation is the newer one: a record may be of its first frame.
    for (const r of this.on(ops, job.instance).map(requestOf)) if (r) requests.set(r.operationId, r);
    return heldDownSince([...requests.values()], since, own);
  }

  /** The operation of the operator's last state change among `mine` since `since`, when it holds the instance down (stop, freeze). */
  private async holdingDown(job: ActionJob, mine: OperationObject[], since: number): Promise<OperationObject | undefined> {
    const own = await this.ownOperations.ids({ target: job.target, project: job.project, instance: job.instance });
    const requests = mine.map(requestOf).filter((r): r is OperatorRequest => r !== undefined);
    const last = heldDownSince(requests, since, own);
    return last && mine.find((op) => op.id === last.operationId);
  }

  /** The task operations of a listing that name the instance (the listing indexed on first use). */
  private on(ops: OperationObject[], instance: string): OperationObject[] {
    let index = this.index.get(ops);
    if (!index) {
      index = new Map();
      for (const op of ops) {
        if (op.class !== 'task') continue;
        const names = new Set(
          Object.values(op.resources ?? {})
            .flat()
            .map((p) => parseSource(p).instance),
        );
        for (const name of names) if (name !== undefined) index.set(name, [...(index.get(name) ?? []), op]);
      }
      this.index.set(ops, index);
    }
    return index.get(instance) ?? [];
  }
}
