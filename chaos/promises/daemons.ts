import type { StoredAuditRecord } from '../../src/audit/audit-record.js';
import { StatusCode } from '../../src/client/status-code.js';
import type { CallRecord } from '../../src/simulator/context.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { acquireDaemonLock, incusBed, lxdBed, TEST_IMAGE, type DaemonBed } from '../../test/support/daemon-bed.js';
import type { StepKind } from './history.js';
import { cleanupAgent, Operator } from './operator.js';

/** What a history needs of the daemon it runs against: the simulator, or a real LXD or Incus. */
export interface Daemon {
  readonly name: string;
  readonly socketPath: string;
  /** The operator at its API, whose calls are the operator's decisions. */
  readonly operator: Operator;
  /** Removes a checked history's instances (its calls are nobody's decision). */
  readonly cleaner: Operator;
  /** The kinds of step this daemon cannot play. */
  readonly without: readonly StepKind[];
  /** The guest dies (kill -9); false when it was not running. */
  crash(name: string): Promise<boolean>;
  /** A running instance reads Error (112); false when it cannot. */
  error(name: string): boolean;
  /** The instance's `volatile.uuid`, '' when it does not exist. */
  identity(name: string): Promise<string>;
  status(name: string): Promise<number | undefined>;
  /** Plays a fault of the daemon itself (socket cut, freeze, frames), if it has them. */
  fault(kind: StepKind, name: string, variant: number): Promise<void>;
  /** How far apart two calls in {@link calls} must be for their order to count (Observation.orderSlackMs). */
  readonly orderSlackMs: number;
  /** Whether enough listeners are on the event stream (the witness and a replica), when it can tell. */
  streamRead(): boolean;
  /** The mutating calls on instances named `prefix…` since `since`, as the checker reads them. */
  calls(since: number, prefix: string, audit: StoredAuditRecord[]): CallRecord[];
  stop(): Promise<void>;
}

/** How long a frozen simulator stays frozen. */
const freezeMs = 800;

/** The simulator: it records every call it receives (its own history) and plays every fault. */
export class SimDaemon implements Daemon {
  readonly name = 'simulator';
  readonly without = [];
  readonly orderSlackMs = 0;
  readonly operator: Operator;
  readonly cleaner: Operator;

  private constructor(private readonly sim: RunningSimulator) {
    this.operator = new Operator(this.socketPath);
    this.cleaner = new Operator(this.socketPath, { agent: cleanupAgent });
  }

  static async start(): Promise<SimDaemon> {
    return new SimDaemon(await startSimulator({ instances: 0, timings: { startMs: 30, stopHookMs: 50 } }));
  }

  get socketPath(): string {
    return this.sim.socketPath!;
  }

  async crash(name: string): Promise<boolean> {
    try {
      this.sim.controls.crash(name);
      return true;
    } catch {
      return false; // not running, or gone
    }
  }

  error(name: string): boolean {
    try {
      // A running guest the daemon loses track of; a stopped one has nothing to lose.
      if (this.sim.controls.statusCode(name) !== StatusCode.Running) return false;
      this.sim.controls.setError(name);
      return true;
    } catch {
      return false;
    }
  }

  async identity(name: string): Promise<string> {
    try {
      return this.sim.controls.identity(name);
    } catch {
      return '';
    }
  }

  async status(name: string): Promise<number | undefined> {
    try {
      return this.sim.controls.statusCode(name);
    } catch {
      return undefined;
    }
  }

  async fault(kind: StepKind, name: string, variant: number): Promise<void> {
    const c = this.sim.controls;
    if (kind === 'socket-cut') c.dropEventSockets();
    else if (kind === 'daemon-freeze') {
      c.freeze();
      await new Promise((r) => setTimeout(r, freezeMs));
      c.thaw();
    } else if (kind === 'bad-frame') c.injectFrame(badFrame(variant, name));
    else if (kind === 'forged-shutdown')
      c.injectFrame({ type: 'lifecycle', metadata: { action: 'instance-shutdown', source: `/1.0/instances/${name}` } });
    else throw new Error(`not a fault of the daemon: ${kind}`);
  }

  streamRead(): boolean {
    return this.sim.controls.eventListeners >= 2;
  }

  calls(since: number, prefix: string): CallRecord[] {
    return this.sim.controls.callHistory(since).filter((c) => c.name.startsWith(prefix) && !c.agent.startsWith(cleanupAgent));
  }

  async stop(): Promise<void> {
    await this.operator.close();
    await this.cleaner.close();
    await this.sim.stop();
  }
}

/**
 * A real LXD or Incus (the test bed's, `scripts/lxd-testbed.sh`, `scripts/incus-testbed.sh`), held
 * under the bed's cross-process lock. It keeps no history of the calls it received, so the
 * checker's history is put together from the two sides that made them: the operator's calls as
 * the operator made them (with the status and identity read just before), and Reflex's as its
 * audit records them (`call` records, and the status its start read, from the `outcome`). A crash
 * is a SIGKILL of the guest's init from the host; the daemon's own faults (cut, freeze, frames)
 * and Error need the simulator.
 */
export class RealDaemon implements Daemon {
  readonly without: readonly StepKind[] = ['error', 'socket-cut', 'daemon-freeze', 'bad-frame', 'forged-shutdown'];
  /** Reflex's audit record of a call is written once the daemon created its operation: up to about 0.5 s on a busy host. */
  readonly orderSlackMs = 500;
  readonly operator: Operator;
  readonly cleaner: Operator;
  readonly journal: CallRecord[] = [];

  private constructor(
    private readonly bed: DaemonBed,
    private readonly unlock: () => Promise<void>,
  ) {
    const create = { source: { type: 'image', alias: TEST_IMAGE }, config: { 'raw.lxc': 'lxc.init.cmd=/sbin/testinit' } };
    this.operator = new Operator(bed.socket, { ...create, journal: this.journal });
    this.cleaner = new Operator(bed.socket, { ...create, agent: cleanupAgent });
  }

  static async start(which: 'lxd' | 'incus'): Promise<RealDaemon> {
    const bed = which === 'lxd' ? lxdBed : incusBed;
    if (!(await bed.reachable())) throw new Error(`${bed.name} is not reachable: ${bed.missing}`);
    return new RealDaemon(bed, await acquireDaemonLock(bed.lock));
  }

  get name(): string {
    return this.bed.name;
  }

  get socketPath(): string {
    return this.bed.socket;
  }

  async crash(name: string): Promise<boolean> {
    try {
      await this.bed.crash(name);
      return true;
    } catch {
      return false;
    }
  }

  error(): boolean {
    return false;
  }

  async identity(name: string): Promise<string> {
    return (await this.operator.show(name))?.uuid ?? '';
  }

  async status(name: string): Promise<number | undefined> {
    return (await this.operator.show(name))?.status;
  }

  async fault(kind: StepKind): Promise<void> {
    throw new Error(`${this.name} cannot play ${kind}`);
  }

  streamRead(): boolean {
    return true;
  }

  calls(since: number, prefix: string, audit: StoredAuditRecord[]): CallRecord[] {
    const outcomes = new Map(audit.filter((r) => r.type === 'outcome').map((r) => [r.correlationId, r]));
    // A call whose operation then failed (an attempt retried or given up, naming that operation) started nothing.
    const failedText = audit
      .filter((r) => r.type === 'outcome' && (r.result === 'retrying' || r.result === 'failed'))
      .map((r) => `${r.summary} ${String(r.operationId ?? '')}`)
      .join('\n');
    const failed = (summary: string) => {
      const op = /operation ([0-9a-f-]{36})/.exec(summary)?.[1];
      return op !== undefined && failedText.includes(op);
    };
    const reflex = audit
      .filter((r) => r.type === 'call' && (r.instance ?? '').startsWith(prefix) && typeof r.path === 'string' && /\/state/.test(String(r.path)))
      .map((r): CallRecord => {
        const action = /\((\w+)\)/.exec(r.summary)?.[1] ?? 'unknown';
        const was = /\(was (\w+)\)/.exec(outcomes.get(r.correlationId)?.summary ?? '')?.[1];
        const statusBefore = was === 'Stopped' ? StatusCode.Stopped : was === 'Error' ? StatusCode.Error : StatusCode.Running;
        const uuid =
          typeof r.uuid === 'string' ? r.uuid : (this.journal.filter((j) => j.name === r.instance && j.at <= Date.parse(r.at)).pop()?.uuid ?? '');
        return {
          at: Date.parse(r.at),
          project: 'default',
          name: r.instance!,
          uuid,
          action,
          statusBefore,
          agent: '',
          result: r.summary.includes('refused') || failed(r.summary) ? 'failure' : 'success',
        };
      });
    return [...this.journal.filter((j) => j.at >= since && j.name.startsWith(prefix)), ...reflex].sort((a, b) => a.at - b.at);
  }

  async stop(): Promise<void> {
    await this.operator.close();
    await this.cleaner.close();
    await this.unlock();
  }
}

/** A frame Reflex must refuse and record, never act on: wrong shapes, an unknown action, deep nesting. */
function badFrame(variant: number, name: string): { type: 'lifecycle'; metadata: unknown } {
  if (variant === 0) return { type: 'lifecycle', metadata: { action: 42, source: ['not', 'a', 'path'] } };
  if (variant === 1) return { type: 'lifecycle', metadata: { action: 'instance-frobnicated', source: `/1.0/instances/${name}` } };
  let deep: unknown = { action: 'instance-shutdown', source: `/1.0/instances/${name}` };
  for (let i = 0; i < 1_000; i++) deep = { nested: deep };
  return { type: 'lifecycle', metadata: deep };
}
