import { ReflexError } from '../errors/reflex-error.js';
import { InstanceClient, type ClientOptions } from './client.js';
import type { Target } from './target.js';

/**
 * The client of each target a process watches, known by the target's id. Jobs carry their target,
 * so every process of a deployment must be given the same targets: a job for another one is
 * TARGET_INVALID.
 */
export class TargetClients {
  private readonly clients: Map<string, InstanceClient>;

  /** `onFailover` is told, with the target's id, when a cluster target moves to its next address. */
  constructor(
    targets: { id: string; target: Target }[],
    opts: { onFailover?: (id: string, move: Parameters<NonNullable<ClientOptions['onFailover']>>[0]) => void } = {},
  ) {
    this.clients = new Map(
      targets.map((t) => [t.id, new InstanceClient(t.target, { onFailover: opts.onFailover && ((m) => opts.onFailover!(t.id, m)) })]),
    );
  }

  /** The client of target `id`; TARGET_INVALID for a target this process is not configured for. */
  readonly for = (id: string): InstanceClient => {
    const c = this.clients.get(id);
    if (!c)
      throw new ReflexError(
        'TARGET_INVALID',
        `a job for target ${id}, which this process is not configured for (it has ${[...this.clients.keys()].join(', ')})`,
      );
    return c;
  };

  /** Closes every client. */
  async close(): Promise<void> {
    for (const c of this.clients.values()) await c.close();
  }
}
