import { z } from 'zod';
import { isApiStatus } from '../client/api-error.js';
import { durationExamples, parseDuration, readDuration } from '../config/duration.js';
import type { ActionOutcome } from './action.js';
import { builtinAction } from './define-action.js';

/** Expands `%Y %m %d %H %M %S` (UTC) in a snapshot name pattern. */
export function snapshotName(pattern: string, now = new Date()): string {
  const two = (n: number) => String(n).padStart(2, '0');
  const parts: Record<string, string> = {
    Y: String(now.getUTCFullYear()),
    m: two(now.getUTCMonth() + 1),
    d: two(now.getUTCDate()),
    H: two(now.getUTCHours()),
    M: two(now.getUTCMinutes()),
    S: two(now.getUTCSeconds()),
  };
  return pattern.replace(/%([YmdHMS])/g, (_, k: string) => parts[k]!);
}

const snapshotNameSchema = z
  .string()
  .min(1)
  .refine((n) => !n.includes('/'), 'a snapshot name cannot hold "/"');

/** Params of the snapshot action. */
export const snapshotParamsSchema = z
  .strictObject({
    /** Name pattern with `%Y%m%d%H%M%S` (UTC). Default `reflex-%Y%m%d-%H%M%S`. */
    name: snapshotNameSchema.default('reflex-%Y%m%d-%H%M%S'),
    /** Expires this long after it is taken (`7d`). */
    expiry: z
      .string()
      .refine((v) => readDuration(v) !== undefined, `not a duration (e.g. ${durationExamples})`)
      .optional(),
    /** Expires at this time (ISO 8601). */
    expiresAt: z
      .string()
      .refine((v) => !Number.isNaN(Date.parse(v)), 'not a date (ISO 8601, e.g. 2026-01-31T00:00:00Z)')
      .optional(),
  })
  .refine((p) => p.expiry === undefined || p.expiresAt === undefined, 'give expiry or expiresAt, not both');

/** Takes a snapshot (params: name pattern, default `reflex-%Y%m%d-%H%M%S`; expiry, e.g. `7d`, or expiresAt). */
export const snapshotAction = builtinAction({
  name: 'snapshot',
  describe: 'take a snapshot (params: name pattern with %Y%m%d%H%M%S, expiry e.g. 7d or expiresAt as ISO 8601)',
  params: snapshotParamsSchema,
  async run(ctx): Promise<ActionOutcome> {
    const name = snapshotName(ctx.params.name);
    const { expiry, expiresAt: at } = ctx.params;
    const expiresAt = at ? new Date(at) : expiry ? new Date(Date.now() + parseDuration(expiry)) : undefined;
    const op = await ctx.client.createSnapshot(ctx.instance, { name, ...(expiresAt ? { expiresAt } : {}) });
    await op.wait();
    return { result: 'done', summary: `snapshot ${name} taken`, operationId: op.id };
  },
});

/** Deletes a snapshot (params: name); nothing to do when it is already gone. */
export const deleteSnapshotAction = builtinAction({
  name: 'delete-snapshot',
  describe: 'delete a snapshot (params: name)',
  params: z.strictObject({ name: snapshotNameSchema }),
  async run(ctx): Promise<ActionOutcome> {
    const { name } = ctx.params;
    try {
      await ctx.client.getSnapshot(ctx.instance, name);
    } catch (err) {
      if (isApiStatus(err, 404)) return { result: 'skipped', summary: `snapshot ${name} is already gone` };
      throw err;
    }
    const op = await ctx.client.deleteSnapshot(ctx.instance, name);
    await op.wait();
    return { result: 'done', summary: `snapshot ${name} deleted`, operationId: op.id };
  },
});

/** Restores a snapshot (params: name, default the newest). */
export const restoreAction = builtinAction({
  name: 'restore',
  describe: 'restore a snapshot (params: name; default the newest)',
  params: z.strictObject({ name: snapshotNameSchema.optional() }),
  async run(ctx): Promise<ActionOutcome> {
    let name = ctx.params.name;
    if (!name) {
      const snaps = await ctx.client.listSnapshots(ctx.instance);
      name = [...snaps].sort((a, b) => String(a.created_at).localeCompare(String(b.created_at))).at(-1)?.name;
      if (!name) return { result: 'skipped', summary: 'no snapshot to restore' };
    }
    const op = await ctx.client.restoreSnapshot(ctx.instance, name);
    await op.wait();
    return { result: 'done', summary: `restored ${name}`, operationId: op.id };
  },
});
