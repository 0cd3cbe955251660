import { createHash } from 'node:crypto';
import { CronExpressionParser } from 'cron-parser';
import { z } from 'zod';
import { parseDuration } from '../config/duration.js';
import type { FilterExpr } from '../filter/ast.js';
import { parseFilter } from '../filter/parser.js';
import { isTimeZone } from './housekeeping/civil-time.js';
import { gfsPeriods } from './housekeeping/gfs.js';
import { namePatternProblem } from './housekeeping/snapshot-name.js';
import type { Task, TaskDefinition } from './housekeeping/tasks.js';

export type { TaskDefinition } from './housekeeping/tasks.js';

/**
 * A schedule: when it ticks, which instances it looks at, and the housekeeping tasks it runs on
 * each of them. Declared in TypeScript next to rules (a file in rules/ may default-export a
 * schedule, a rule, or an array of both); see rules/examples/schedules.ts.
 *
 * Each tick runs once across all replicas (a BullMQ job scheduler in Redis), and the schedule
 * survives restarts of every replica. Give exactly one of `every` and `cron`.
 */
export interface ScheduleDefinition {
  /** Unique name: lowercase letters, digits and dashes. Names the job scheduler and audit records (`rule`). */
  name: string;
  description?: string;
  /** Fixed interval: `10s`, `15m`, `6h` or milliseconds (at least 1 s). */
  every?: string | number;
  /** Cron expression (5 fields, or 6 with seconds first): `0 3 * * *`. */
  cron?: string;
  /** Time zone of `cron`, of snapshot names and of GFS periods. Default UTC. */
  tz?: string;
  /**
   * A tick that fires late (every replica was down when it was due): `'one'` runs it once on
   * return (BullMQ keeps a single pending tick, so several missed ticks make one run); `'skip'`
   * drops it and waits for the next due time. Default 'one'.
   */
  catchUp?: 'skip' | 'one';
  /** How late a tick may start and still count as on time, for catchUp 'skip'. Default: half the interval, between 1 s and 5 min. */
  catchUpGrace?: string | number;
  /** Which instances the tasks look at. Every field given must match; omitted, all instances of all projects. */
  scope?: {
    /** The seed's filter language with LXD semantics, evaluated on each instance: `config.user.backup eq true`. */
    filter?: string;
    /** Projects to look in. Default: all projects. */
    projects?: string[];
  };
  /** What each tick does, per instance. At most one task of each kind. */
  tasks: TaskDefinition[];
  /** Plan, print and audit the plan, change nothing. Default false. */
  dryRun?: boolean;
  /** Default true. A disabled schedule's job scheduler is removed. */
  enabled?: boolean;
  /**
   * An instance whose newest snapshot from this schedule is older than this raises one alert
   * (`snapshot-stale`), like `sanoid --monitor-snapshots`. Default: twice the interval.
   */
  staleAfter?: string | number;
  /** Attempts of each instance's housekeeping job before it gives up and alerts. Default: the action retry policy's (5). */
  attempts?: number;
  /**
   * Follow-up events around each instance's steps, for rules to act on (`{ kind: 'rule.event',
   * name: [...] }`): `before` is published before the first change, `after` once the steps ended
   * (payload: schedule, steps, result). Not a gate: the steps do not wait for the rules.
   */
  events?: { before?: string; after?: string };
}

/** A validated schedule, as the scheduler uses it. */
export interface Schedule {
  kind: 'schedule';
  name: string;
  description?: string;
  /** Interval in ms, for `every`. */
  everyMs?: number;
  cron?: string;
  tz: string;
  catchUp: 'skip' | 'one';
  /** Lateness in ms beyond which catchUp 'skip' drops a tick. */
  catchUpGraceMs: number;
  projects?: string[];
  scopeFilter?: FilterExpr;
  tasks: Task[];
  dryRun: boolean;
  enabled: boolean;
  /** Age (ms) of an instance's newest snapshot beyond which the schedule alerts. */
  staleAfterMs: number;
  /** Attempts of each housekeeping job; undefined: the retry policy's. */
  attempts?: number;
  events?: { before?: string; after?: string };
  /** Hash of the definition: replicas recognise an unchanged job scheduler by it. */
  fingerprint: string;
  /** The definition as written. */
  definition: ScheduleDefinition;
}

const duration = z.union([z.string(), z.number().int().min(0)]);
const common = { filter: z.string().optional(), dryRun: z.boolean().optional() };
const count = z.number().int().min(0).max(10_000);
const eventName = z.string().regex(/^[a-z0-9][a-z0-9.-]*$/, 'use lowercase letters, digits, dots and dashes');

const taskSchema = z.discriminatedUnion('task', [
  z.strictObject({
    task: z.literal('snapshot'),
    namePattern: z.string().optional(),
    expiry: duration.optional(),
    includeStopped: z.boolean().optional(),
    ...common,
  }),
  z.strictObject({
    task: z.literal('retention'),
    keepLast: z.number().int().min(1).max(10_000).optional(),
    keepWithin: duration.optional(),
    gfs: z
      .strictObject(
        Object.fromEntries(gfsPeriods.map((p) => [p, count.optional()])) as Record<(typeof gfsPeriods)[number], z.ZodOptional<typeof count>>,
      )
      .optional(),
    owned: z.string().optional(),
    pruneFirstBelow: z.number().min(0).max(1).optional(),
    ...common,
  }),
  z.strictObject({ task: z.literal('prune-expired'), owned: z.string().optional(), ...common }),
  z.strictObject({
    task: z.literal('delete-stopped'),
    olderThan: duration,
    confirm: z.literal(true, { error: 'delete-stopped deletes instances: set confirm: true to mean it' }),
    ...common,
  }),
]);

const scheduleSchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'use lowercase letters, digits and dashes'),
  description: z.string().optional(),
  every: duration.optional(),
  cron: z.string().optional(),
  tz: z.string().optional(),
  catchUp: z.enum(['skip', 'one']).optional(),
  catchUpGrace: duration.optional(),
  scope: z.strictObject({ filter: z.string().optional(), projects: z.array(z.string().min(1)).min(1).optional() }).optional(),
  tasks: z.array(taskSchema).min(1),
  dryRun: z.boolean().optional(),
  enabled: z.boolean().optional(),
  staleAfter: duration.optional(),
  attempts: z.number().int().min(1).max(25).optional(),
  events: z.strictObject({ before: eventName.optional(), after: eventName.optional() }).optional(),
});

/** Validates a schedule definition; throws a readable error naming the field at fault. */
export function defineSchedule(def: ScheduleDefinition): Schedule {
  const label = def && typeof def.name === 'string' ? ` "${def.name}"` : '';
  const fail = (msg: string): never => {
    throw new Error(`invalid schedule${label}: ${msg}`);
  };
  const parsed = scheduleSchema.safeParse(def);
  if (!parsed.success) fail(parsed.error.issues.map((i) => `${i.path.join('.') || '(schedule)'}: ${i.message}`).join('; '));
  const ms = (field: string, v: string | number): number => {
    try {
      return typeof v === 'number' ? v : parseDuration(v);
    } catch (err) {
      return fail(`${field}: ${(err as Error).message}`);
    }
  };
  const filter = (field: string, text: string | undefined): FilterExpr | undefined => {
    if (text === undefined) return undefined;
    try {
      return parseFilter(text);
    } catch (err) {
      return fail(`${field}: ${(err as Error).message}`);
    }
  };

  const tz = def.tz ?? 'UTC';
  if (!isTimeZone(tz)) fail(`tz: unknown time zone "${tz}"`);
  if ((def.every === undefined) === (def.cron === undefined)) fail('give exactly one of every and cron');
  let everyMs: number | undefined;
  let intervalMs: number;
  if (def.every !== undefined) {
    everyMs = ms('every', def.every);
    if (everyMs < 1000) fail('every: at least 1s');
    intervalMs = everyMs;
  } else {
    const fields = def.cron!.trim().split(/\s+/);
    if (fields.length !== 5 && fields.length !== 6) fail(`cron: "${def.cron}" has ${fields.length} fields (expected 5, or 6 with seconds first)`);
    let first: number | undefined;
    let second: number | undefined;
    // BullMQ's job scheduler fires on cron-parser's next() (getNextMillis): the same parser, at the
    // version BullMQ pins, without loading BullMQ and ioredis into every command that reads rules.
    let fires: ReturnType<typeof CronExpressionParser.parse> | undefined;
    try {
      fires = CronExpressionParser.parse(def.cron!, { currentDate: new Date(), tz });
    } catch (err) {
      fail(`cron: "${def.cron}": ${(err as Error).message}`);
    }
    try {
      // As getNextMillis: a next() that throws is no next fire.
      first = fires!.next().getTime();
      second = fires!.next().getTime();
    } catch {
      // never fires: reported below
    }
    if (first === undefined || second === undefined || !(second > first)) fail(`cron: "${def.cron}" never fires`);
    intervalMs = second! - first!;
  }

  const kinds = new Set<string>();
  const tasks: Task[] = [];
  const snapshotDef = def.tasks.find((t) => t.task === 'snapshot');
  const defaultPattern = `${def.name}-%Y%m%d-%H%M%S`;
  def.tasks.forEach((t, i) => {
    const at = `tasks.${i}`;
    if (kinds.has(t.task)) fail(`${at}: a second "${t.task}" task (at most one of each kind per schedule)`);
    kinds.add(t.task);
    const base = { filter: filter(`${at}.filter`, t.filter), dryRun: t.dryRun ?? def.dryRun ?? false };
    const pattern = (field: string, p: string) => {
      const problem = namePatternProblem(p);
      if (problem) fail(`${at}.${field}: "${p}" ${problem}`);
      return p;
    };
    switch (t.task) {
      case 'snapshot':
        tasks.push({
          task: 'snapshot',
          namePattern: pattern('namePattern', t.namePattern ?? defaultPattern),
          expiryMs: t.expiry === undefined ? undefined : ms(`${at}.expiry`, t.expiry),
          includeStopped: t.includeStopped ?? false,
          ...base,
        });
        break;
      case 'retention': {
        const hasGfs = Object.values(t.gfs ?? {}).some((n) => (n ?? 0) > 0);
        if (t.keepLast === undefined && t.keepWithin === undefined && !hasGfs) fail(`${at}: give keepLast, keepWithin and/or gfs counts`);
        if (t.owned === undefined && !snapshotDef)
          fail(
            `${at}.owned: the schedule takes no snapshots of its own; say which snapshots retention manages (a name pattern of Reflex's snapshots, or 'any')`,
          );
        const owned = t.owned === undefined || t.owned === 'any' ? t.owned : pattern('owned', t.owned);
        const keepWithinMs = t.keepWithin === undefined ? undefined : ms(`${at}.keepWithin`, t.keepWithin);
        tasks.push({ task: 'retention', keepLast: t.keepLast, keepWithinMs, gfs: t.gfs, owned, pruneFirstBelow: t.pruneFirstBelow ?? 0.1, ...base });
        break;
      }
      case 'prune-expired':
        tasks.push({ task: 'prune-expired', owned: t.owned === undefined ? undefined : pattern('owned', t.owned), ...base });
        break;
      case 'delete-stopped':
        // An unscoped delete-stopped would delete every old stopped instance on the server.
        if (!t.filter && !def.scope?.filter)
          fail(`${at}: delete-stopped needs a filter (on the task or in scope) naming the instances it may delete`);
        tasks.push({ task: 'delete-stopped', olderThanMs: ms(`${at}.olderThan`, t.olderThan), ...base });
        break;
    }
  });

  const graceMs =
    def.catchUpGrace === undefined ? Math.min(300_000, Math.max(1000, Math.round(intervalMs / 2))) : ms('catchUpGrace', def.catchUpGrace);
  const fingerprint = createHash('sha256').update(JSON.stringify(def)).digest('hex').slice(0, 16);
  return {
    kind: 'schedule',
    name: def.name,
    description: def.description,
    everyMs,
    cron: def.cron,
    tz,
    catchUp: def.catchUp ?? 'one',
    catchUpGraceMs: graceMs,
    projects: def.scope?.projects,
    scopeFilter: filter('scope.filter', def.scope?.filter),
    tasks,
    dryRun: def.dryRun ?? false,
    enabled: def.enabled ?? true,
    staleAfterMs: def.staleAfter === undefined ? 2 * intervalMs : ms('staleAfter', def.staleAfter),
    attempts: def.attempts,
    events: def.events,
    fingerprint,
    definition: def,
  };
}

/** Whether a value is a schedule made by {@link defineSchedule}. */
export function isSchedule(value: unknown): value is Schedule {
  return Boolean(value) && typeof value === 'object' && (value as Schedule).kind === 'schedule' && typeof (value as Schedule).name === 'string';
}
