import { StatusCode } from '../client/status-code.js';
import type { SimContext } from './context.js';

/** Name of the i-th seeded instance (1-based): inst-00001, inst-00002, … */
export function seededName(i: number): string {
  return `inst-${String(i).padStart(5, '0')}`;
}

/**
 * Seeds `count` running containers in project default, silently (no events), with deterministic
 * volatile keys when the simulator has a seed. Every tenth carries `user.reflex.autorestart=true`
 * so filters have something to select.
 */
export function seedPopulation(ctx: SimContext, count: number): void {
  const createdAt = ctx.ops.now();
  for (let i = 1; i <= count; i++) {
    const config: Record<string, string> = { 'user.role': i % 2 === 0 ? 'web' : 'worker' };
    if (i % 10 === 0) config['user.reflex.autorestart'] = 'true';
    const inst = ctx.store.add({ name: seededName(i), createdAt, config });
    ctx.actions.markRunning(inst, true);
    inst.statusCode = StatusCode.Running;
    inst.touch();
  }
}
