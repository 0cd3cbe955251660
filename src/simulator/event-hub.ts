import type { WebSocket } from 'ws';
import type { SimEventOptions } from './options.js';
import { formatTimestamp, nowNs, type UtcSuffix } from './time.js';

/** The event types of /1.0/events (LXD 5.0.2). */
export type SimEventType = 'operation' | 'lifecycle' | 'logging';

/** Every supported type, in the order LXD lists them. */
export const allEventTypes: readonly SimEventType[] = ['logging', 'operation', 'lifecycle'];

/** What a listener asked for. `project` null means all projects. */
export interface ListenerFilter {
  types: ReadonlySet<SimEventType>;
  project: string | null;
}

interface Listener {
  ws: WebSocket;
  filter: ListenerFilter;
  missedPings: number;
  /** Send times of frames whose write callback has not fired yet, oldest first. */
  unflushed: number[];
  unflushedHead: number;
}

interface Frame {
  type: SimEventType;
  project: string | undefined;
  text: string;
}

/**
 * Fans events out to WebSocket listeners like LXD's event server: one JSON object plus "\n" per
 * text frame, keepalive pings with payload "keepalive", disconnection after too many missed pongs
 * (terminate, no close frame), and removal of slow consumers whose writes miss the deadline.
 *
 * Frames are serialised once and written in batches (socket corked per tick) so a 10k-event
 * storm costs one JSON.stringify per event, not per listener.
 */
export class EventHub {
  private readonly listeners = new Set<Listener>();
  private outbox: Frame[] = [];
  private flushScheduled = false;
  private paused = false;
  private readonly held: Frame[] = [];
  private readonly pingTimer: NodeJS.Timeout;
  private readonly deadlineTimer: NodeJS.Timeout;
  /** Number of frames published since start, for tests and benchmarks. */
  published = 0;

  constructor(
    private readonly opts: SimEventOptions,
    private readonly utcSuffix: UtcSuffix,
    /** `location` of events not tied to an instance: "none" standalone, the answering member in a cluster. */
    private readonly location = 'none',
  ) {
    this.pingTimer = setInterval(() => this.pingAll(), opts.pingIntervalMs).unref();
    this.deadlineTimer = setInterval(() => this.enforceDeadline(), Math.max(20, Math.min(1000, opts.writeDeadlineMs / 5))).unref();
  }

  /** Number of connected listeners. */
  get size(): number {
    return this.listeners.size;
  }

  /** True when some listener wants this type (lets callers skip building logging events). */
  wants(type: SimEventType): boolean {
    for (const l of this.listeners) if (l.filter.types.has(type)) return true;
    return false;
  }

  /** Registers an upgraded socket. The first keepalive ping goes out right away, as in LXD. */
  add(ws: WebSocket, filter: ListenerFilter): void {
    const listener: Listener = { ws, filter, missedPings: 0, unflushed: [], unflushedHead: 0 };
    this.listeners.add(listener);
    ws.on('pong', () => {
      listener.missedPings = 0;
    });
    // The server only reads to notice disconnects; messages from the client are ignored.
    ws.on('close', () => this.listeners.delete(listener));
    ws.on('error', () => this.drop(listener));
    this.ping(listener);
  }

  /**
   * Publishes an event. `project` is omitted for logging events, which reach every listener;
   * `location` is the member the event comes from (cluster mode). Field order is LXD's: type,
   * timestamp, metadata, location, project.
   */
  publish(type: SimEventType, metadata: unknown, project?: string, location = this.location): void {
    const timestamp = formatTimestamp(nowNs(), this.utcSuffix);
    const loc = JSON.stringify(location);
    const text =
      project === undefined
        ? `{"type":"${type}","timestamp":"${timestamp}","metadata":${JSON.stringify(metadata)},"location":${loc}}\n`
        : `{"type":"${type}","timestamp":"${timestamp}","metadata":${JSON.stringify(metadata)},"location":${loc},"project":${JSON.stringify(project)}}\n`;
    this.enqueue({ type, project, text });
  }

  /**
   * Sends a frame the caller wrote (fault injection: a frame dated ahead, one of any size) to the
   * listeners of its type and project, as it is.
   */
  publishText(type: SimEventType, text: string, project?: string): void {
    this.enqueue({ type, project, text: text.endsWith('\n') ? text : `${text}\n` });
  }

  private enqueue(frame: Frame): void {
    this.published++;
    if (this.paused) {
      this.held.push(frame);
      return;
    }
    this.outbox.push(frame);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /** Holds frames until resume() (fault injection: delivery stalls, nothing is lost). */
  pause(): void {
    this.paused = true;
  }

  /** Delivers held frames, in order, and resumes normal delivery. */
  resume(): void {
    this.paused = false;
    for (const f of this.held.splice(0)) this.outbox.push(f);
    this.flush();
  }

  /** Cuts every listener without a close frame, like a daemon that dies. */
  dropAll(): void {
    for (const l of [...this.listeners]) this.drop(l);
  }

  /** Stops timers and drops everyone. */
  close(): void {
    clearInterval(this.pingTimer);
    clearInterval(this.deadlineTimer);
    this.dropAll();
  }

  private flush(): void {
    this.flushScheduled = false;
    const frames = this.outbox;
    this.outbox = [];
    if (frames.length === 0) return;
    for (const l of this.listeners) {
      const socket = (l.ws as unknown as { _socket?: { cork(): void; uncork(): void } })._socket;
      socket?.cork();
      for (const f of frames) {
        if (!l.filter.types.has(f.type)) continue;
        if (f.project !== undefined && l.filter.project !== null && l.filter.project !== f.project) continue;
        this.send(l, f.text);
      }
      socket?.uncork();
    }
  }

  private send(l: Listener, text: string): void {
    if (l.ws.readyState !== l.ws.OPEN) return;
    l.unflushed.push(Date.now());
    l.ws.send(text, (err) => {
      if (err) return this.drop(l);
      l.unflushedHead++;
      if (l.unflushedHead === l.unflushed.length) {
        l.unflushed = [];
        l.unflushedHead = 0;
      }
    });
  }

  private enforceDeadline(): void {
    const now = Date.now();
    for (const l of this.listeners) {
      const oldest = l.unflushed[l.unflushedHead];
      if (oldest !== undefined && now - oldest > this.opts.writeDeadlineMs) this.drop(l);
    }
  }

  private pingAll(): void {
    for (const l of this.listeners) {
      if (l.missedPings > this.opts.maxMissedPings) this.drop(l);
      else this.ping(l);
    }
  }

  private ping(l: Listener): void {
    l.missedPings++;
    try {
      l.ws.ping('keepalive');
    } catch {
      this.drop(l);
    }
  }

  private drop(l: Listener): void {
    this.listeners.delete(l);
    l.ws.terminate();
  }
}
