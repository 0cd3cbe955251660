import type { Logger } from 'pino';
import type { RunningTargetReader } from '../events/target-reader.js';
import type { ReadinessParts } from '../http/readiness.js';
import type { ProbeRunner } from '../probes/probe-runner.js';

/**
 * What the roles a process runs need besides what every role shares, as they declare it
 * (app/roles.ts): the rule set, held (reloadable) or required (a folder with no rule and no
 * schedule refuses the start), and the notifier (a role that sends).
 */
export interface RoleNeeds {
  rules?: 'held' | 'required';
  sends?: boolean;
}

/** One role's composition root as it runs (subscriber, worker or scheduler). */
export interface RoleRoot {
  /** The readers of the targets' event streams (subscriber role). */
  readers?: RunningTargetReader[];
  /** The health probes' runner (scheduler role). */
  probes?: ProbeRunner;
  /** Stops the role's parts, letting work in progress finish; the shared parts are closed after. */
  stop(): Promise<void>;
  /** What /readyz checks for the role: its readers, its workers, the queues it feeds or consumes, the history store it ships to. */
  readiness: Pick<ReadinessParts, 'readers' | 'workers' | 'queues' | 'history'>;
  /** Sends the errors the role's own writes to Redis get (beyond its workers' and queues') to `to`: the write probe. */
  reportWriteErrors?(to: (err: unknown) => void): void;
}

/** How often a part that has not stopped yet is logged (a stop waiting on a Redis that does not answer, or on jobs in flight). */
export const slowStopLogMs = 5_000;

/**
 * What a root undoes at stop, and when its start fails half-way (a process whose start failed
 * must exit, not keep a lease or a socket open): run in the order added, each failure logged
 * while the rest still run. A part that takes longer than {@link slowStopLogMs} is logged by name
 * at that interval until it stops, so a stop that waits is never silent.
 */
export class StopList {
  private readonly stops: { part: string; stop: () => Promise<void> }[] = [];

  constructor(private readonly logger: Logger) {}

  /** Adds a stop of the part named `part`, run after those added before it. */
  add(part: string, stop: () => Promise<void>): void {
    this.stops.push({ part, stop });
  }

  /** Adds a stop of the part named `part`, run before all the others. */
  addFirst(part: string, stop: () => Promise<void>): void {
    this.stops.unshift({ part, stop });
  }

  /** Runs every stop once. */
  async run(): Promise<void> {
    for (const { part, stop } of this.stops.splice(0)) {
      const started = Date.now();
      let ticks = 0;
      // The timer's clock is not the wall clock's: its first tick can read 4999 ms on Date.now(). The
      // wait said is at least the ticks' worth, and the wall clock's when that is longer (a busy loop).
      const slow = setInterval(
        () =>
          this.logger.warn(
            { part, waitedMs: Math.max(Date.now() - started, ++ticks * slowStopLogMs) },
            `stopping: ${part} has not stopped yet (waiting on Redis, or on its work in flight)`,
          ),
        slowStopLogMs,
      );
      slow.unref();
      try {
        await stop();
      } catch (err) {
        this.logger.warn({ err, part }, `error while stopping ${part}`);
      } finally {
        clearInterval(slow);
      }
    }
  }
}
