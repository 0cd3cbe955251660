import type { InstanceClient } from '../src/client/client.js';
import type { RunningSimulator } from '../src/simulator/simulator.js';

/** What the load did so far. */
export interface LoadCounts {
  /** Mutating API calls sent (PATCH, snapshot create/delete, state changes). */
  calls: number;
  /** Calls refused by the server or whose operation failed. */
  errors: number;
  /**
   * Operations whose outcome the load did not read before the server forgot it (~5 s after it
   * ended): the soak's own process was too slow, on a loaded machine. Not Reflex's doing.
   */
  unseen: number;
  /** The first few error messages. */
  errorSamples: string[];
}

/**
 * `rate` mutating API calls a second against the instances that are not opted in to restarts, as
 * operators and tools would send them: half config changes (PATCH, `instance-updated`), a quarter
 * snapshots (created, then deleted on the next pick: snapshot events, and pause/resume on a running
 * instance), a quarter stops (forced) and starts. Reads (the snapshot list, the operation's
 * outcome) are not counted. An instance has one call in flight at most, so
 * the calls never meet the daemon's busy lock, and each call's operation is awaited.
 */
export class ApiLoad {
  readonly counts: LoadCounts = { calls: 0, errors: 0, unseen: 0, errorSamples: [] };
  private readonly idle: string[];
  private readonly inFlight = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private startedAt = 0;
  private tick = 0;

  constructor(
    private readonly client: InstanceClient,
    private readonly sim: RunningSimulator,
    instances: string[],
    private readonly rate: number,
  ) {
    this.idle = [...instances];
  }

  start(): void {
    this.startedAt = Date.now();
    // Paced against the clock, not the timer: a late tick sends what was due meanwhile.
    this.timer = setInterval(() => {
      const due = Math.floor(((Date.now() - this.startedAt) / 1000) * this.rate) - this.counts.calls;
      for (let i = 0; i < due && this.idle.length > 0; i++) this.send();
    }, 20);
  }

  /** Stops sending and waits for the calls in flight. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all([...this.inFlight]);
  }

  private send(): void {
    const name = this.idle.splice(Math.floor(Math.random() * this.idle.length), 1)[0]!;
    this.counts.calls++;
    const p = this.call(name, this.counts.calls)
      .catch((err: unknown) => {
        if ((err as { code?: string }).code === 'OPERATION_VANISHED') return void this.counts.unseen++;
        this.counts.errors++;
        if (this.counts.errorSamples.length < 5) this.counts.errorSamples.push(`${name}: ${(err as Error).message}`);
      })
      .finally(() => {
        this.idle.push(name);
        this.inFlight.delete(p);
      });
    this.inFlight.add(p);
  }

  private async call(name: string, n: number): Promise<void> {
    const kind = n % 4;
    if (kind === 0 || kind === 2) {
      await this.client.patchInstance(name, { config: { 'user.soak.tick': String(++this.tick) } });
    } else if (kind === 1) {
      // Asked, not remembered: a call whose outcome went unseen leaves no wrong belief behind.
      const has = ((await this.client.listSnapshots(name, { recursion: 0 })) as string[]).some((u) => u.endsWith('/soak'));
      const op = has ? await this.client.deleteSnapshot(name, 'soak') : await this.client.createSnapshot(name, { name: 'soak' });
      await op.wait({ timeoutMs: 30_000 });
    } else {
      const running = this.sim.controls.statusCode(name) === 103;
      const op = await this.client.changeState(name, running ? { action: 'stop', force: true } : { action: 'start' });
      await op.wait({ timeoutMs: 30_000 });
    }
  }
}
