import type { FilterExpr } from '../../filter/ast.js';
import type { GfsCounts } from './gfs.js';

/**
 * The housekeeping tasks a schedule runs on each instance in its scope, as an author writes them
 * (durations as `7d`, `2h`, `10s` or milliseconds) and as the planner uses them (validated, in ms,
 * filters parsed). Every task may narrow the schedule's scope with its own `filter`, and may be
 * made a dry-run on its own.
 */

interface TaskCommon {
  /** Extra filter (seed filter language, LXD semantics) on top of the schedule's scope. */
  filter?: string;
  /** Plan and audit, change nothing. Default: the schedule's `dryRun`. */
  dryRun?: boolean;
}

/** Take a snapshot of each instance in scope. */
export interface SnapshotTaskDefinition extends TaskCommon {
  task: 'snapshot';
  /** Name pattern (tokens %Y %m %d %H %M %S %L %s). Default `<schedule name>-%Y%m%d-%H%M%S`. A name already taken gets a suffix (`-2`). */
  namePattern?: string;
  /** The daemon deletes the snapshot after this long (`7d`). Default: never. */
  expiry?: string | number;
  /** Snapshot stopped instances too. Default false. */
  includeStopped?: boolean;
}

/** Delete the snapshots the schedule owns beyond what the policy keeps. */
export interface RetentionTaskDefinition extends TaskCommon {
  task: 'retention';
  /** Keep the newest N. */
  keepLast?: number;
  /** Keep every snapshot taken within this long (`2d`), like restic's `--keep-within`. */
  keepWithin?: string | number;
  /** Keep the newest of each of the last N hours/days/weeks/months/years. */
  gfs?: GfsCounts;
  /**
   * Which snapshots retention may delete. Default: those the schedule's own snapshot task made
   * (as the ledger records them; never inferred from names). A name pattern: the snapshots any
   * schedule of Reflex made whose names match. `'any'`: every snapshot, manual ones included.
   */
  owned?: string;
  /**
   * Free fraction of the instance's storage pool below which deletions run before the new
   * snapshot is taken (otherwise after it). Default 0.1.
   */
  pruneFirstBelow?: number;
}

/** Delete snapshots whose expiry has passed (the daemon normally removes them itself, about once a minute). */
export interface PruneExpiredTaskDefinition extends TaskCommon {
  task: 'prune-expired';
  /** Limit to snapshots matching this name pattern. Default: any expired snapshot. */
  owned?: string;
}

/** Delete stopped instances that have not run for a while (e.g. CI leftovers). */
export interface DeleteStoppedTaskDefinition extends TaskCommon {
  task: 'delete-stopped';
  /** Minimum time since the instance last ran (or was created, if it never ran): `2d`. */
  olderThan: string | number;
  /** Must be `true`: deleting instances is never implied. */
  confirm: true;
}

export type TaskDefinition = SnapshotTaskDefinition | RetentionTaskDefinition | PruneExpiredTaskDefinition | DeleteStoppedTaskDefinition;

interface ResolvedCommon {
  filter?: FilterExpr;
  dryRun: boolean;
}

export interface SnapshotTask extends ResolvedCommon {
  task: 'snapshot';
  namePattern: string;
  expiryMs?: number;
  includeStopped: boolean;
}

export interface RetentionTask extends ResolvedCommon {
  task: 'retention';
  keepLast?: number;
  keepWithinMs?: number;
  gfs?: GfsCounts;
  /** A name pattern, 'any', or undefined: the schedule's own (ledger). */
  owned?: string;
  pruneFirstBelow: number;
}

export interface PruneExpiredTask extends ResolvedCommon {
  task: 'prune-expired';
  owned?: string;
}

export interface DeleteStoppedTask extends ResolvedCommon {
  task: 'delete-stopped';
  olderThanMs: number;
}

/** A task as the planner uses it. */
export type Task = SnapshotTask | RetentionTask | PruneExpiredTask | DeleteStoppedTask;
