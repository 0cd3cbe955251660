import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import type { Socket as NetSocket } from 'node:net';
import WebSocket from 'ws';
import type { EventsEndpoint } from '../client/client.js';
import { isConnectionFailure } from '../client/transport.js';
import type { Metrics } from '../metrics/metrics.js';
import { framesOfMessage } from './frame-intake.js';
import { DEFAULT_MAX_FRAME_BYTES } from './frame-size.js';

/** Options of {@link EventSubscriber}. */
export interface EventSubscriberOptions {
  endpoint: () => EventsEndpoint;
  /**
   * Called for every frame, on the socket's read path: must not block. A frame refused before
   * parsing (empty, not UTF-8, nested too deep, not JSON, not a frame) comes as the note of its refusal
   * (frame-intake.ts), to be queued like a frame and kept as rejected.
   */
  onFrame: (raw: string, receivedAt: number) => void;
  /** Deepest nesting of arrays and objects a frame may have; a deeper one is refused unparsed. Default 64. */
  maxFrameDepth?: number;
  /** Called after every (re)connect, once the socket is open: the place to resync. */
  onConnected?: () => Promise<void>;
  logger: Logger;
  /**
   * A socket that has received neither a frame nor a ping for this long is considered dead and
   * replaced. The daemon pings every 10 s. Default 25 000 ms.
   */
  silenceTimeoutMs?: number;
  /** First reconnect delay; doubles up to `maxBackoffMs`, with full jitter. Default 100 ms. */
  initialBackoffMs?: number;
  /** Default 10 000 ms. */
  maxBackoffMs?: number;
  /** Counts reconnects; none: not counted. */
  metrics?: Metrics;
  /**
   * Largest frame accepted (`ws` maxPayload). A larger one makes `ws` close the socket with 1009:
   * the frame is lost, `onOversized` is told, and the subscriber reconnects (and so resyncs).
   * Default 4 MiB.
   */
  maxFrameBytes?: number;
  /** Called when a frame larger than `maxFrameBytes` was refused, with its size as its header declared it (when known); none: only logged. */
  onOversized?: (receivedAt: number, bytes?: number) => void;
}

/**
 * Holds a WebSocket to `/1.0/events` open: answers keepalive pings (ws replies with a pong by
 * itself), replaces a silent socket, reconnects with exponential backoff and jitter, and calls
 * `onConnected` after each connect so the caller can resync what the gap may have hidden. The
 * endpoint is asked again on each connect: a cluster target's moves to the next member's address
 * after a connection failure (the endpoint's `unreachable`).
 * Emits 'connected', 'disconnected' (with the reason).
 */
export class EventSubscriber extends EventEmitter {
  private socket: WebSocket | undefined;
  private stopped = false;
  private attempt = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private lastHeard = 0;
  /** Since when the stream has been down (start included), and when that was last said at error level. */
  private downSince: number | undefined;
  private downReportedAt = 0;
  private openedOnce = false;
  private readonly opts: Required<Omit<EventSubscriberOptions, 'onConnected' | 'metrics' | 'onOversized' | 'maxFrameDepth'>> &
    Pick<EventSubscriberOptions, 'onConnected' | 'metrics' | 'onOversized' | 'maxFrameDepth'>;

  constructor(opts: EventSubscriberOptions) {
    super();
    this.opts = { silenceTimeoutMs: 25_000, initialBackoffMs: 100, maxBackoffMs: 10_000, maxFrameBytes: DEFAULT_MAX_FRAME_BYTES, ...opts };
  }

  get connected(): boolean {
    return this.socket?.readyState === WebSocket.OPEN;
  }

  /**
   * Since when (epoch ms) the stream has been down after it was once open; undefined while it is
   * open, and before the first connect (see {@link everConnected}).
   */
  get lostSince(): number | undefined {
    return this.everConnected ? this.downSince : undefined;
  }

  /** Whether the stream has been open at least once. */
  get everConnected(): boolean {
    return this.openedOnce;
  }

  start(): void {
    this.stopped = false;
    this.downSince = Date.now();
    this.downReportedAt = Date.now();
    this.connect();
  }

  /** Closes the socket and stops reconnecting. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    const s = this.socket;
    if (s && s.readyState !== WebSocket.CLOSED) {
      await new Promise<void>((resolve) => {
        s.once('close', () => resolve());
        s.terminate();
      });
    }
  }

  private connect(): void {
    const endpoint = this.opts.endpoint();
    const { url, options } = endpoint;
    // UTF-8 is checked by framesOfMessage, which records a bad frame; `ws` would close the socket (1007) and lose it unrecorded.
    const socket = new WebSocket(url, { ...options, handshakeTimeout: 10_000, maxPayload: this.opts.maxFrameBytes, skipUTF8Validation: true });
    this.socket = socket;
    let watchdog: NodeJS.Timeout | undefined;
    socket.on('open', () => {
      this.attempt = 0;
      this.openedOnce = true;
      this.lastHeard = Date.now();
      // Bytes arriving count as life too: a frame of many megabytes takes a while to arrive on a
      // slow link or a busy machine, and the daemon's pings wait behind it on the same socket.
      // (`ws` keeps the underlying socket as `_socket`; without it, frames and pings only.)
      (socket as unknown as { _socket?: NetSocket })._socket?.on('data', () => {
        this.lastHeard = Date.now();
      });
      const every = Math.min(1000, this.opts.silenceTimeoutMs / 2);
      let lastTick = Date.now();
      watchdog = setInterval(() => {
        const now = Date.now();
        // A tick that comes late is this process's own stall (a long synchronous step, a starved
        // or suspended process), not the daemon's silence: what the daemon sent meanwhile waits unread
        // in the socket, and timers run before the socket is read. That time is not counted.
        const stalledMs = now - lastTick - every;
        lastTick = now;
        if (stalledMs > every) this.lastHeard = Math.min(now, this.lastHeard + stalledMs);
        if (now - this.lastHeard > this.opts.silenceTimeoutMs) {
          this.opts.logger.warn({ silentMs: Date.now() - this.lastHeard }, 'event socket silent (no frame, no keepalive); reconnecting');
          socket.terminate();
        }
      }, every);
      this.emit('connected');
      const downMs = this.downSince === undefined ? 0 : Date.now() - this.downSince;
      this.downSince = undefined;
      this.opts.logger.info({ url, downMs }, 'event stream connected');
      // The socket is open before the resync reads, so nothing between the read and the stream is lost.
      this.opts.onConnected?.().catch((err) => {
        this.opts.logger.error({ err }, 'resync after connect failed; reconnecting to retry');
        socket.terminate();
      });
    });
    socket.on('ping', () => {
      this.lastHeard = Date.now();
    });
    socket.on('message', (data) => {
      this.lastHeard = Date.now();
      const receivedAt = Date.now();
      // Whatever a peer sends must not end the process: a frame is refused and recorded, never thrown.
      try {
        for (const frame of framesOfMessage(messageBytes(data), receivedAt, { maxDepth: this.opts.maxFrameDepth }))
          this.opts.onFrame(frame, receivedAt);
      } catch (err) {
        this.opts.logger.error({ err }, 'event frame could not be taken in; dropped (the next resync covers it)');
      }
    });
    socket.on('error', (err) => {
      // ws refusing a frame over maxPayload (close code 1009): the frame is gone and the daemon does not
      // send it again. Cut at once rather than wait out the close handshake behind the frame's bytes.
      if ((err as { code?: string }).code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') {
        // The size its header declared (`ws` keeps it as `_receiver._totalPayloadLength`; none: unknown).
        const declared = (socket as unknown as { _receiver?: { _totalPayloadLength?: unknown } })._receiver?._totalPayloadLength;
        const bytes = typeof declared === 'number' && declared > this.opts.maxFrameBytes ? declared : undefined;
        this.opts.logger.error(
          { maxFrameBytes: this.opts.maxFrameBytes, bytes },
          'event frame larger than maxFrameBytes refused and lost; reconnecting and resyncing',
        );
        this.opts.onOversized?.(Date.now(), bytes);
        socket.terminate();
        return;
      }
      this.opts.logger.warn({ err, url }, 'event socket error');
      // A cluster target reconnects to its next member; the resync on connect covers the gap.
      if (isConnectionFailure(err)) endpoint.unreachable?.();
    });
    socket.on('close', (code) => {
      clearInterval(watchdog);

      // A socket replaced meanwhile (stop then start, as on a lease hand-back) must not reconnect too.
      const current = this.socket === socket;
      if (current) this.socket = undefined;
      this.emit('disconnected', code);
      if (this.stopped || !current) return;
      this.opts.metrics?.streamReconnects.inc();
      const ceiling = Math.min(this.opts.maxBackoffMs, this.opts.initialBackoffMs * 2 ** this.attempt++);
      const delay = Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
      // Losing the target is an error, said once when it happens and again each minute it lasts;
      // the attempts in between are warnings. /readyz shows it too (the subscriber check).
      const now = Date.now();
      if (this.downSince === undefined) {
        this.downSince = now;
        this.downReportedAt = now;
        this.opts.logger.error({ code, retryInMs: delay }, 'lost the event stream of the target: no event is seen until it is back; reconnecting');
      } else if (now - this.downReportedAt >= 60_000) {
        this.downReportedAt = now;
        this.opts.logger.error(
          { code, downMs: now - this.downSince, retryInMs: delay },
          'the target is still unreachable: no event is seen; reconnecting',
        );
      } else {
        this.opts.logger.warn({ code, retryInMs: delay }, 'event stream closed; reconnecting');
      }
      this.reconnectTimer = setTimeout(() => this.connect(), delay);
    });
  }
}

/** A message's bytes as `ws` hands them over (one Buffer; fragments or an ArrayBuffer with another binaryType). */
function messageBytes(data: WebSocket.RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  return Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
}
