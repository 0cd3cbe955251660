import type WebSocket from 'ws';
import { operationSchema, type OperationObject } from './envelope.js';
import type { EventsEndpoint } from './events.js';
import { isFinalOperationCode } from './status-code.js';
import { webSocketClass } from './web-socket.js';
import { DAEMON_JSON_MAX_DEPTH, parseBoundedJson } from '../input/json-bounds.js';

/** Most operations a subscription remembers; older ones are dropped first. */
const MAX_TRACKED = 256;

/**
 * A WebSocket on `/1.0/events?type=operation` shared by the calls of a client, so that a call
 * can subscribe *before* it sends its request and never miss a fast completion. Events are
 * hints (the daemon does not order them, notes §1): a subscription keeps, per operation, the
 * final state if one was seen, else the most recently updated one.
 */
export class OperationFeed {
  private socket: WebSocket | undefined;
  private opening: Promise<WebSocket> | undefined;
  private readonly subscriptions = new Set<OperationSubscription>();

  private externallyConnected = false;

  /**
   * @param endpoint the operation events URL and TLS options (see `InstanceClient.eventsEndpoint`).
   *   Without one, the feed is driven by a subscriber the caller already runs: it passes every
   *   frame to {@link ingest} and its connection state to {@link setConnected}.
   */
  constructor(private readonly endpoint?: () => EventsEndpoint) {}

  /** Opens the socket if needed and starts buffering operation events for the caller. */
  async subscribe(): Promise<OperationSubscription> {
    if (this.endpoint) await this.open();
    else if (!this.externallyConnected) throw new Error('the event subscriber feeding this operation feed is not connected');
    const sub = new OperationSubscription(() => this.subscriptions.delete(sub));
    this.subscriptions.add(sub);
    return sub;
  }

  /** Closes the socket; open subscriptions are marked lost, so waits fall back to polling. */
  async close(): Promise<void> {
    const s = this.socket;
    this.socket = undefined;
    if (s && s.readyState !== s.CLOSED) {
      await new Promise<void>((resolve) => {
        s.once('close', () => resolve());
        s.terminate();
      });
    }
  }

  /** Feeds one raw event frame from an outside subscriber (any type; non-operation frames are ignored). */
  ingest(raw: string): void {
    this.dispatch(raw);
  }

  /**
   * Reports the outside subscriber's connection state. A disconnect marks open subscriptions
   * lost (their waits fall back to polling); while disconnected, calls do not subscribe.
   */
  setConnected(connected: boolean): void {
    this.externallyConnected = connected;
    if (!connected) for (const sub of this.subscriptions) sub.lose();
  }

  private open(): Promise<WebSocket> {
    if (this.socket && this.socket.readyState === this.socket.OPEN) return Promise.resolve(this.socket);
    this.opening ??= new Promise<WebSocket>((resolve, reject) => {
      const { url, options } = this.endpoint!();
      const socket = new (webSocketClass())(url, { ...options, handshakeTimeout: 10_000 });
      socket.once('open', () => {
        this.socket = socket;
        this.opening = undefined;
        resolve(socket);
      });
      // A persistent listener: an 'error' after the socket opened must not go unhandled.
      socket.on('error', (err) => {
        if (this.socket === socket) return;
        this.opening = undefined;
        reject(err);
      });
      socket.on('message', (data) => this.dispatch(String(data)));
      socket.once('close', () => {
        if (this.socket === socket) this.socket = undefined;
        for (const sub of this.subscriptions) sub.lose();
      });
    });
    return this.opening;
  }

  private dispatch(raw: string): void {
    // A frame too deep to walk is no operation this feed can use: the events stream's own reader records it.
    const bounded = parseBoundedJson(raw, { maxDepth: DAEMON_JSON_MAX_DEPTH });
    if (!bounded.ok) return;
    const frame = bounded.value;
    if (!frame || typeof frame !== 'object' || (frame as { type?: unknown }).type !== 'operation') return;
    const parsed = operationSchema.safeParse((frame as { metadata?: unknown }).metadata);
    if (!parsed.success) return;
    for (const sub of this.subscriptions) sub.push(parsed.data);
  }
}

/** Operation events received since a call subscribed; see {@link OperationFeed.subscribe}. */
export class OperationSubscription {
  private readonly latest = new Map<string, OperationObject>();
  private readonly waiters = new Set<() => void>();
  private lost = false;

  constructor(private readonly onRelease: () => void) {}

  /** True once the socket closed: events may have been missed from then on. */
  get isLost(): boolean {
    return this.lost;
  }

  /** The best-known state of an operation, if any event about it arrived. */
  get(id: string): OperationObject | undefined {
    return this.latest.get(id);
  }

  /**
   * Resolves on the next event, on loss of the socket, after `ms`, or on abort: with true only
   * when `ms` passed without any of the others.
   */
  changed(ms: number, signal?: AbortSignal): Promise<boolean> {
    if (this.lost || signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (timedOut: boolean) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', wake);
        this.waiters.delete(wake);
        resolve(timedOut);
      };
      const wake = () => done(false);
      const timer = setTimeout(() => done(true), ms);
      signal?.addEventListener('abort', wake, { once: true });
      this.waiters.add(wake);
    });
  }

  /** Stops buffering. */
  release(): void {
    this.onRelease();
    this.latest.clear();
    this.wake();
  }

  /** @internal */
  push(op: OperationObject): void {
    const known = this.latest.get(op.id);
    if (known && isFinalOperationCode(known.status_code)) return;
    if (known && !isFinalOperationCode(op.status_code) && Date.parse(op.updated_at) < Date.parse(known.updated_at)) return;
    this.latest.delete(op.id);
    this.latest.set(op.id, op);
    if (this.latest.size > MAX_TRACKED) this.latest.delete(this.latest.keys().next().value as string);
    this.wake();
  }

  /** @internal */
  lose(): void {
    this.lost = true;
    this.wake();
  }

  private wake(): void {
    for (const w of [...this.waiters]) w();
  }
}
