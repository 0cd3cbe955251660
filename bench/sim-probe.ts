import type { SimContext } from '../src/simulator/context.js';
import type { RunningSimulator } from '../src/simulator/simulator.js';

/**
 * Timestamps (performance.now) taken inside the simulator: when it published each lifecycle event
 * and when it received each mutating call. Wraps two methods of the running simulator's context
 * instead of adding hooks to src/, so the simulator stays as the tests see it.
 */
export class SimProbe {
  /** "action instance" → publish times, in order. */
  readonly published = new Map<string, number[]>();
  /** "action instance" → call times (start, stop, …), in order. */
  readonly calls = new Map<string, number[]>();

  constructor(sim: RunningSimulator) {
    const ctx = (sim.controls as unknown as { ctx: SimContext }).ctx;
    const publish = ctx.hub.publish.bind(ctx.hub);
    ctx.hub.publish = (type, metadata, project) => {
      if (type === 'lifecycle') {
        const md = metadata as { action: string; source: string };
        record(this.published, `${md.action} ${md.source.slice(md.source.lastIndexOf('/') + 1)}`);
      }
      publish(type, metadata, project);
    };
    const count = ctx.calls.count.bind(ctx.calls);
    ctx.calls.count = (key, action, call) => {
      record(this.calls, `${action} ${key.slice(key.indexOf('/') + 1)}`);
      return count(key, action, call);
    };
  }

  /** Lifecycle events published so far, all actions. */
  get lifecycleCount(): number {
    let n = 0;
    for (const v of this.published.values()) n += v.length;
    return n;
  }
}

function record(map: Map<string, number[]>, key: string): void {
  const list = map.get(key);
  if (list) list.push(performance.now());
  else map.set(key, [performance.now()]);
}
