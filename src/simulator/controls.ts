import { StatusCode } from '../client/status-code.js';
import { ClusterActions } from './cluster-actions.js';
import type { CallRecord, SimContext } from './context.js';
import { SimHttpError } from './envelope.js';
import { createTrustToken, tokenString } from './handlers/certificates.js';
import type { HttpScript } from './guest/http-scripts.js';
import type { CommandScript } from './guest/scripted-commands.js';
import { instanceKey, type InstanceType, type SimInstance } from './instance-model.js';

/** Where a control call applies: an instance name, in `default` unless a project is given. */
export interface InstanceRef {
  project?: string;
}

/** An instance to add directly (tests, demos), bypassing the API and its events. */
export interface SeedInstance {
  name: string;
  project?: string;
  type?: InstanceType;
  /** 'Running' (default), 'Stopped', 'Frozen' or 'Error'. */
  status?: 'Running' | 'Stopped' | 'Frozen' | 'Error';
  /** Cluster member (cluster mode); the next Online one when absent. */
  location?: string;
  config?: Record<string, string>;
  ephemeral?: boolean;
}

/**
 * Fault injection and inspection, in-process. The HTTP control API under /sim/ maps 1:1 onto
 * these methods (handlers/control.ts).
 */
export class SimulatorControls {
  private readonly cluster: ClusterActions;
  private thawFrozen: (() => void) | undefined;

  constructor(
    private readonly ctx: SimContext,
    private readonly restartServer: (downtimeMs: number) => Promise<void>,
  ) {
    this.cluster = new ClusterActions(ctx);
  }

  /** The guest dies (kill -9): Stopped at once, `instance-shutdown` without requestor after the stop hook. */
  crash(name: string, ref: InstanceRef = {}): void {
    const inst = this.instance(name, ref);
    if (inst.memberOffline) throw new SimHttpError(400, `Cluster member "${inst.location}" is offline`);
    if (!inst.isActive) throw new SimHttpError(400, 'The instance is not running');
    this.ctx.actions.crash(inst);
  }

  /** Status Error 112, no event (the real daemon emits none). A forced stop brings it back to Stopped. */
  setError(name: string, ref: InstanceRef = {}): void {
    this.ctx.actions.setError(this.instance(name, ref));
  }

  /** The guest signals readiness: Ready 113 and `instance-ready` (later revision only). */
  setReady(name: string, ref: InstanceRef = {}): void {
    if (this.ctx.opts.revision !== 'later') throw new SimHttpError(400, 'Ready (113) exists only in the later revision');
    const inst = this.instance(name, ref);
    if (inst.statusCode !== StatusCode.Running) throw new SimHttpError(400, 'The instance is not running');
    this.ctx.actions.setReady(inst);
  }

  /** The next `count` operations on the instance fail (Failure 400 with `err`). */
  failNext(name: string, count = 1, err = 'Injected failure', ref: InstanceRef = {}): void {
    this.faultsOf(name, ref).failNext = { count, err };
  }

  /** The next `count` operations on the instance hang in Running 103, cancellable (104 → 401). */
  hangNext(name: string, count = 1, ref: InstanceRef = {}): void {
    this.faultsOf(name, ref).hangNext = count;
  }

  /** Crash loop: every start succeeds, then the guest exits after `uptimeMs` (false turns it off). */
  crashLoop(name: string, uptimeMs: number | false = this.ctx.opts.timings.crashLoopUptimeMs, ref: InstanceRef = {}): void {
    const f = this.faultsOf(name, ref);
    if (uptimeMs === false) delete f.crashLoop;
    else f.crashLoop = { uptimeMs };
  }

  /** The next start fails like LXD's: op Failure, busy "stop" for a moment, then a spurious `instance-shutdown`. */
  failNextStart(name: string, ref: InstanceRef = {}): void {
    this.faultsOf(name, ref).failNextStart = true;
  }

  /** The next start takes `ms` (a slow `lxc.hook.pre-start` on the daemon): the instance holds the "start" lock that long. */
  slowNextStart(name: string, ms: number, ref: InstanceRef = {}): void {
    this.faultsOf(name, ref).slowNextStart = ms;
  }

  /** The guest ignores the shutdown signal: graceful stops fail after their timeout (or hang with -1). */
  ignoreShutdown(name: string, on = true, ref: InstanceRef = {}): void {
    this.faultsOf(name, ref).ignoreShutdown = on;
  }

  /** Disarms the faults of one instance, or of all. */
  clearFaults(name?: string, ref: InstanceRef = {}): void {
    this.ctx.faults.clear(name === undefined ? undefined : instanceKey(ref.project ?? 'default', name));
  }

  /** Cuts every events socket (no close frame). */
  dropEventSockets(): void {
    this.ctx.hub.dropAll();
  }

  /**
   * Sends a frame of the caller's making to the event listeners as it is (a lifecycle frame dated
   * ahead of the clock, a frame of 50 MB): what a daemon with a wrong clock or a huge payload sends.
   * `timestamp` defaults to now, `location` to "none".
   */
  injectFrame(frame: {
    type: 'operation' | 'lifecycle' | 'logging';
    metadata: unknown;
    timestamp?: string;
    project?: string;
    location?: string;
  }): void {
    const full = { timestamp: new Date().toISOString(), location: 'none', ...frame };
    this.ctx.hub.publishText(frame.type, JSON.stringify(full), frame.project);
  }

  /** Holds event delivery; nothing is lost. */
  pauseEvents(): void {
    this.ctx.hub.pause();
  }

  /** Delivers held events in order and resumes. */
  resumeEvents(): void {
    this.ctx.hub.resume();
  }

  /**
   * Freezes the daemon as a SIGSTOP would: API requests (other than /sim/) and event delivery wait
   * until {@link thaw}; nothing is lost.
   */
  freeze(): void {
    if (this.thawFrozen) return;
    this.ctx.hub.pause();
    this.ctx.frozen = new Promise<void>((resolve) => (this.thawFrozen = resolve));
  }

  /** Ends a {@link freeze}: held requests are served and held events delivered in order. */
  thaw(): void {
    const thaw = this.thawFrozen;
    if (!thaw) return;
    this.thawFrozen = undefined;
    this.ctx.frozen = undefined;
    thaw();
    this.ctx.hub.resume();
  }

  /** Emits `count` lifecycle events (`instance-updated` by default) over the instances, round-robin. */
  storm(count: number, opts: { action?: string; name?: string; project?: string } = {}): void {
    const targets = opts.name ? [this.instance(opts.name, opts)] : this.ctx.store.list(opts.project ?? 'default');
    if (targets.length === 0) throw new SimHttpError(400, 'No instance to storm about');
    const action = opts.action ?? 'instance-updated';
    for (let i = 0; i < count; i++) this.ctx.lifecycle.emit(targets[i % targets.length]!, action);
  }

  /**
   * Restarts the daemon: event sockets close, listeners go away for `downtimeMs`, operations are
   * forgotten (their ids answer 404), instances and their states survive.
   */
  restart(downtimeMs = 100): Promise<void> {
    return this.restartServer(downtimeMs);
  }

  /** Mutating API calls received for an instance (all actions, or one: start, stop, update, …). */
  calls(name: string, action?: string, ref: InstanceRef = {}): number {
    return this.ctx.calls.get(instanceKey(ref.project ?? 'default', name), action);
  }

  /** Every call count, keyed "project/name" then action. */
  callCounts(): Record<string, Record<string, number>> {
    return this.ctx.calls.snapshot();
  }

  /**
   * The mutating API calls received since `since` (ms since the epoch), oldest first, each with
   * the instance's identity, its status when the call arrived and the caller's User-Agent: the
   * daemon's own history a promise checker reads (chaos/promises/).
   */
  callHistory(since = 0): CallRecord[] {
    return this.ctx.calls.history(since);
  }

  /** Forgets the call counts. */
  resetCalls(): void {
    this.ctx.calls.reset();
  }

  /** Trusts a client certificate (PEM) on HTTPS; returns its SHA-256 fingerprint. */
  trust(pem: string, name = 'client'): string {
    return this.ctx.trust.add(pem, name);
  }

  /**
   * Issues a trust token for `clientName` and returns the string `lxc remote add NAME <token>`
   * takes (needs HTTPS). Revoke it by cancelling its operation.
   */
  issueToken(clientName = 'client'): string {
    const op = createTrustToken(this.ctx, clientName);
    return tokenString(op.metadata ?? {}, clientName);
  }

  /** Cluster mode: the member stops answering (Offline; its instances list as Error and refuse calls). */
  memberDown(member: string): void {
    this.cluster.memberDown(member);
  }

  /** Cluster mode: the member answers again (Online). */
  memberUp(member: string): void {
    this.cluster.memberUp(member);
  }

  /** Cluster mode: evacuates a member at once (its instances move to the other Online members). */
  evacuate(member: string): void {
    this.cluster.evacuate(member);
  }

  /** Cluster mode: brings an evacuated member back, with the instances evacuated from it. */
  restore(member: string): void {
    this.cluster.restore(member);
  }

  /** Cluster mode: moves an instance to another member at once (a running one is stopped and started there). */
  move(name: string, member: string, ref: InstanceRef = {}): void {
    this.cluster.move(this.instance(name, ref), member);
  }

  /** Cluster mode: the member holding an instance. */
  locationOf(name: string, ref: InstanceRef = {}): string {
    return this.instance(name, ref).location;
  }

  /** Adds an instance in a given state without API calls or events. */
  addInstance(spec: SeedInstance): void {
    const inst = this.ctx.store.add({
      name: spec.name,
      project: spec.project,
      type: spec.type,
      config: spec.config,
      ephemeral: spec.ephemeral,
      createdAt: this.ctx.ops.now(),
      target: spec.location,
    });
    const status = spec.status ?? 'Running';
    if (status !== 'Stopped') this.ctx.actions.markRunning(inst, true);
    inst.statusCode = { Running: StatusCode.Running, Stopped: StatusCode.Stopped, Frozen: StatusCode.Frozen, Error: StatusCode.Error }[status];
    inst.touch();
  }

  /** The instance's identity, `volatile.uuid` (a re-created instance of the same name has another). */
  identity(name: string, ref: InstanceRef = {}): string {
    return this.instance(name, ref).config['volatile.uuid'] ?? '';
  }

  /** Current status code of an instance. */
  statusCode(name: string, ref: InstanceRef = {}): number {
    return this.instance(name, ref).statusCode;
  }

  /** Number of connected event listeners. */
  get eventListeners(): number {
    return this.ctx.hub.size;
  }

  /**
   * Scripts what a command does in the guests (all, or one instance): its outcome per call,
   * the last one repeating, e.g. `{ command: 'systemctl restart nginx', outcomes: [{ exitCode: 1,
   * stderr: 'Job failed\n' }, { exitCode: 0 }] }`. Calls are counted per instance.
   */
  scriptCommand(script: CommandScript): void {
    this.ctx.guests.scripts.define(script);
  }

  /** How often a scripted command line was called in an instance. */
  commandCalls(name: string, command: string, ref: InstanceRef = {}): number {
    return this.ctx.guests.scripts.calls(instanceKey(ref.project ?? 'default', name), command);
  }

  /** Every scripted command with its calls per instance. */
  scriptedCommands(): ReturnType<SimContext['guests']['scripts']['list']> {
    return this.ctx.guests.scripts.list();
  }

  /** Forgets every scripted command. */
  clearScriptedCommands(): void {
    this.ctx.guests.scripts.clear();
  }

  /**
   * Scripts what the instances' HTTP endpoint answers (all instances, or one; every path and guest
   * port, or one): its outcome per request, the last one repeating, e.g. `{ instance: 'web1', path:
   * '/healthz', outcomes: [{ status: 503 }, { hang: true }] }`. Requests are counted per instance;
   * the most specific script answers (an instance's own, then one for the path, then for the port).
   */
  scriptHttp(script: HttpScript): void {
    this.ctx.guestNet.script(script);
  }

  /** Requests an instance's HTTP endpoint received (scripted or not), on every path and port or one. */
  httpCalls(name: string, opts: InstanceRef & { path?: string; port?: number } = {}): number {
    return this.ctx.guestNet.calls(instanceKey(opts.project ?? 'default', name), opts);
  }

  /** Every HTTP script with its calls per instance. */
  httpScripts(): ReturnType<SimContext['guestNet']['scriptList']> {
    return this.ctx.guestNet.scriptList();
  }

  /** Forgets every HTTP script: running instances answer 200 "ok" again on every path and port. */
  clearHttpScripts(): void {
    this.ctx.guestNet.clearScripts();
  }

  /**
   * The instance's address (the global IPv4 address its state shows while it runs), from now on
   * listened on while it runs, as after its state was read.
   */
  guestAddress(name: string, ref: InstanceRef = {}): string {
    const inst = this.instance(name, ref);
    this.ctx.guestNet.addressShown(inst);
    return inst.guestAddress!;
  }

  /** The guest ports (option `guestPorts`), and the listens that failed. */
  guestNetwork(): { ports: readonly number[]; listenErrors: ReturnType<SimContext['guestNet']['listenErrors']['slice']> } {
    return { ports: this.ctx.guestNet.ports, listenErrors: [...this.ctx.guestNet.listenErrors] };
  }

  /** Each running interactive exec and whether it waits for its terminal (exec-sockets.ts). */
  terminals(): ReturnType<SimContext['execSockets']['terminals']> {
    return this.ctx.execSockets.terminals();
  }

  /** Event frames published since start, held ones included (a test waits on it for an event that exists but reached nobody). */
  get eventsPublished(): number {
    return this.ctx.hub.published;
  }

  private instance(name: string, ref: InstanceRef): SimInstance {
    return this.ctx.store.get(ref.project ?? 'default', name);
  }

  private faultsOf(name: string, ref: InstanceRef): ReturnType<SimContext['faults']['of']> {
    const inst = this.instance(name, ref);
    return this.ctx.faults.of(instanceKey(inst.project, inst.name));
  }
}
