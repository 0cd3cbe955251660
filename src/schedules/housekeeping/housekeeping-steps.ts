import { z } from 'zod';
import type { AuditInput } from '../../audit/audit-log.js';
import { isApiStatus } from '../../client/api-error.js';
import type { InstanceClient } from '../../client/client.js';
import type { Operation } from '../../client/operation.js';
import { StatusCode } from '../../client/status-code.js';
import { ReflexError } from '../../errors/reflex-error.js';
import { formatSnapshotName, uniqueSnapshotName } from './snapshot-name.js';

const stepSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('create-snapshot'),
    name: z.string().min(1),
    expiresAt: z.string().optional(),
    dryRun: z.boolean(),
    describe: z.string(),
    /** A job that runs more than `afterMs` after its tick queued it (wall clock) names the snapshot by the time it is taken, with this pattern. */
    late: z.object({ pattern: z.string().min(1), tz: z.string(), queuedAt: z.number(), afterMs: z.number() }).optional(),
  }),
  z.object({ kind: z.literal('delete-snapshot'), name: z.string().min(1), dryRun: z.boolean(), describe: z.string() }),
  z.object({ kind: z.literal('delete-instance'), dryRun: z.boolean(), describe: z.string() }),
]);

/**
 * Params of the `housekeeping` action: the steps a schedule's tick planned for one instance, in
 * order, and the plan they came from (recorded with every call).
 */
export const housekeepingParamsSchema = z.strictObject({
  schedule: z.string(),
  steps: z.array(stepSchema).min(1),
  plan: z.object({ order: z.string(), steps: z.array(z.string()), keep: z.array(z.string()) }),
  /** Follow-up events (`rule.event`) to publish before the first change and after the last. */
  events: z.object({ before: z.string().optional(), after: z.string().optional() }).optional(),
});
export type HousekeepingParams = z.infer<typeof housekeepingParamsSchema>;
type Step = z.infer<typeof stepSchema>;

/** The call of a step, under the same action names rules use (snapshot, delete-snapshot, delete). */
function callOf(step: Step, instance: string): { method: string; path: string; action: string } {
  const i = encodeURIComponent(instance);
  switch (step.kind) {
    case 'create-snapshot':
      return { method: 'POST', path: `/1.0/instances/${i}/snapshots`, action: 'snapshot' };
    case 'delete-snapshot':
      return { method: 'DELETE', path: `/1.0/instances/${i}/snapshots/${encodeURIComponent(step.name)}`, action: 'delete-snapshot' };
    case 'delete-instance':
      return { method: 'DELETE', path: `/1.0/instances/${i}`, action: 'delete' };
  }
}

/**
 * What the steps need of the job they run in: the `housekeeping` action's context (src/actions/,
 * which sits above this folder and registers the action), named here by what the steps call.
 */
export interface StepContext {
  client: InstanceClient;
  instance: string;
  /** When true no step sends a mutating request; each records what it would do. */
  dryRun: boolean;
  /** The action's acting client, with `record` in each of its calls' audit records (the action's `clientNoting`). */
  clientNoting(record: Record<string, unknown>): InstanceClient;
  audit(record: Omit<AuditInput, 'correlationId' | 'instance' | 'target'>): Promise<void>;
  /** The job's project (records of two instances of one name in two projects stay apart). */
  job?: { project: string };
}

/** How the steps ended, as the action reports it; `snapshot` is the name a late snapshot was taken under, for the ledger. */
export interface StepsOutcome {
  result: 'done' | 'dry-run';
  summary: string;
  snapshot?: string;
}

/**
 * Announces the schedule's before event (before the first change) and after event (after the
 * last, with how the steps went): the action publishes them as follow-up events.
 */
export type Announce = (when: 'before' | 'after', extra: Record<string, unknown>) => Promise<void>;

/**
 * Runs the steps a schedule's tick planned for one instance, in order, each through the same call
 * path as every action (self-marked, audited with its plan). A snapshot that cannot be taken stops
 * the steps after it (retention counted on it); the job is then retried by the retry policy, and
 * alerted when it gives up. A deletion that fails after this job made its snapshot is audited and
 * left to the next tick (the job ends done, so the ledger confirms the snapshot). A retried job is
 * idempotent: a snapshot this job already took is not taken again, a deletion whose target is gone
 * is done.
 */
export async function runHousekeepingSteps(ctx: StepContext, params: HousekeepingParams, announce: Announce): Promise<StepsOutcome> {
  const { steps, plan, schedule } = params;
  let done = 0;
  let dry = 0;
  let created = false;
  const failed: string[] = [];
  let announced = false;
  let renamed: string | undefined;
  for (const planned of steps) {
    const step = planned.kind === 'create-snapshot' && !planned.dryRun && !ctx.dryRun ? await namedWhenTaken(ctx, planned, schedule) : planned;
    if (step.kind === 'create-snapshot' && planned.kind === 'create-snapshot' && step.name !== planned.name) renamed = step.name;
    const d = callOf(step, ctx.instance);
    const record = { step: step.describe, plan, schedule };
    if (step.dryRun || ctx.dryRun) {
      await ctx.audit({
        type: 'call',
        summary: `dry-run: would ${d.method} ${ctx.client.pathOf(d.path)} (${step.describe})`,
        method: d.method,
        path: ctx.client.pathOf(d.path),
        dryRun: true,
        ...record,
      });
      dry++;
      continue;
    }
    if (!announced) {
      announced = true;
      await announce('before', {});
    }
    if (await alreadyDone(ctx, step)) {
      await ctx.audit({
        type: 'call',
        summary: `${d.method} ${ctx.client.pathOf(d.path)} (${step.describe}): already done`,
        method: d.method,
        path: ctx.client.pathOf(d.path),
        ...record,
      });
      if (step.kind === 'create-snapshot') created = true;
      done++;
      continue;
    }
    try {
      await (await send(ctx.clientNoting(record), ctx.instance, step)).wait();
    } catch (err) {
      // Someone (the daemon's own expiry pruning, another tool) deleted it first: the goal holds.
      if (step.kind !== 'create-snapshot' && isApiStatus(err, 404)) {
        done++;
        continue;
      }
      if (step.kind === 'create-snapshot') throw await createFailure(ctx, step.name, err);
      // The snapshot is made, so this job must end done: the ledger takes the snapshot as Reflex's only
      // from a job that ended done. The deletion is planned again by the next tick and counted failed.
      if (created) {
        failed.push(step.describe);
        await ctx.audit({
          type: 'call',
          summary: `${step.describe} failed (${(err as { code?: string }).code ?? 'UNKNOWN'}): ${(err as Error).message}; the next tick plans it again`,
          ...record,
        });
        continue;
      }
      throw err;
    }
    if (step.kind === 'create-snapshot') created = true;
    done++;
  }
  const result = done === 0 && failed.length === 0 ? 'dry-run' : 'done';
  if (announced) await announce('after', { result, done, failed });
  if (result === 'dry-run') return { result, summary: `${schedule}: ${dry} dry-run step(s)` };
  return {
    result,
    summary: `${schedule}: ${done} change(s) made${failed.length ? `, ${failed.length} failed (${failed.join('; ')})` : ''}${dry ? `, ${dry} dry-run` : ''}`,
    ...(renamed ? { snapshot: renamed } : {}),
  };
}

/**
 * A snapshot step of a job that runs late (held behind a hung operation, say; lateness counted from
 * when the tick queued it, so a tick BullMQ itself took late keeps its due-time name) is named by the time
 * it is taken, as sanoid names its snapshots, not by the tick it was planned for: the ticks missed
 * meanwhile take none (the tick runner records them missed), so this one snapshot stands for them.
 * The ledger learns the name from the job's outcome.
 */
async function namedWhenTaken(ctx: StepContext, step: Extract<Step, { kind: 'create-snapshot' }>, schedule: string): Promise<Step> {
  const now = Date.now();
  if (!step.late || now - step.late.queuedAt <= step.late.afterMs) return step;
  const taken = new Set((await ctx.client.listSnapshots(ctx.instance)).map((s) => s.name));
  // An earlier attempt made it under the planned name (its answer lost): the retry's check finds it.
  if (taken.has(step.name)) return step;
  const name = uniqueSnapshotName(formatSnapshotName(step.late.pattern, now, step.late.tz), (n) => taken.has(n));
  await ctx.audit({
    type: 'call',
    summary: `${schedule}: the snapshot planned as ${step.name} is taken ${Math.round((now - step.late.queuedAt) / 1000)} s after its tick queued it, so it is named by the time it is taken: ${name}`,
    schedule,
    snapshot: name,
    plannedName: step.name,
    ...(ctx.job ? { project: ctx.job.project } : {}),
  });
  return { ...step, name, describe: step.describe.split(step.name).join(name) };
}

/**
 * The error of a snapshot that was not made. Whether the snapshot now exists decides: if it does,
 * someone else made one of that name since the tick listed them; it is theirs, so no retry (a retry
 * would find it and take it for Reflex's). If not, the failure is worth a retry even when the
 * operation itself failed (a busy or briefly full pool): the retry policy's attempts, then its alert.
 */
async function createFailure(ctx: StepContext, name: string, err: unknown): Promise<unknown> {
  const code = (err as { code?: string }).code;
  // A timeout or a cut connection may hide a snapshot our own operation made: the retry's check finds it.
  const refused = code === 'OPERATION_FAILED' || code === 'API_CONFLICT' || code === 'API_ERROR';
  if (!refused) return err;
  const exists = await ctx.client.getSnapshot(ctx.instance, name).then(
    () => true,
    () => false,
  );
  if (exists)
    return new ReflexError(
      'API_CONFLICT',
      `snapshot ${name} of ${ctx.instance} was made by someone else meanwhile; not taken for Reflex's (the next tick picks another name)`,
      { cause: err, retryable: false },
    );
  if (code === 'OPERATION_FAILED') return new ReflexError('OPERATION_FAILED', (err as Error).message, { cause: err, retryable: true });
  return err;
}

function send(client: InstanceClient, instance: string, step: Step): Promise<Operation> {
  switch (step.kind) {
    case 'create-snapshot':
      return client.createSnapshot(instance, { name: step.name, ...(step.expiresAt ? { expiresAt: new Date(step.expiresAt) } : {}) });
    case 'delete-snapshot':
      return client.deleteSnapshot(instance, step.name);
    case 'delete-instance':
      return client.deleteInstance(instance);
  }
}

/** Whether an earlier attempt of this job already made the step's change. */
async function alreadyDone(ctx: StepContext, step: Step): Promise<boolean> {
  try {
    if (step.kind === 'create-snapshot') {
      await ctx.client.getSnapshot(ctx.instance, step.name);
      return true;
    }
    if (step.kind === 'delete-snapshot') {
      await ctx.client.getSnapshot(ctx.instance, step.name);
      return false;
    }
    const state = await ctx.client.getInstanceState(ctx.instance);
    if (state.status_code !== StatusCode.Stopped)
      throw new ReflexError('API_CONFLICT', `${ctx.instance} is ${state.status} again; not deleting a running instance`, { retryable: false });
    return false;
  } catch (err) {
    if (isApiStatus(err, 404)) return step.kind !== 'create-snapshot';
    throw err;
  }
}
