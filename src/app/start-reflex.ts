import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { installProcessGuards } from '../log/process-guards.js';
import { handleOf, type ReflexHandle } from './reflex-handle.js';
import { StopList, type RoleRoot } from './role-root.js';
import { needsOf, rolesOf } from './roles.js';
import { startServing } from './serving.js';
import { openSharedParts } from './shared-parts.js';

export type { ReflexHandle } from './reflex-handle.js';

/**
 * Starts Reflex in the configured role: the shared parts (with what its roles need: rules, a
 * notifier), then the root of each role it runs (`all` runs the three), then what every role
 * serves (/readyz over what the roots run, HTTP). A start that fails half-way undoes what it started.
 */
export async function startReflex(config: Config, logger: Logger): Promise<ReflexHandle> {
  installProcessGuards(logger);
  const roles = rolesOf(config.role);
  const { shared, held } = await openSharedParts(config, logger, needsOf(roles));
  const roots: RoleRoot[] = [];
  const stop = async () => {
    for (const root of roots) await root.stop();
    const closing = new StopList(logger);
    closing.add('the shared parts (queues, Redis and daemon connections)', () => shared.close());
    await closing.run();
  };
  try {
    for (const role of roles) roots.push(await role.start(shared, held));
    return handleOf(shared, held, roots, await startServing(shared, held, roots), stop);
  } catch (err) {
    await stop();
    throw err;
  }
}
