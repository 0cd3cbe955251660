import { ReflexError } from '../errors/reflex-error.js';
import type { OperationObject } from './envelope.js';
import { Transport, type RequestOptions, type Response } from './transport.js';

/** A mutating request as it leaves the client: method, path with its query (`?project=`), body. */
export interface SentRequest {
  method: string;
  path: string;
  body?: unknown;
  /** Fields the caller asked to be noted with its requests (see {@link ActingTransport.noting}). */
  note?: Record<string, unknown>;
}

/**
 * What must happen around each mutating request an acting transport carries, in one place: the
 * caller (the executor) checks its lock, marks the call as its own, records what was sent and what
 * came of it, or refuses to send (dry-run). Reads go to the server untouched.
 */
export interface CallWatch {
  /** Sends `req` by calling `send`, or refuses it by throwing without calling it. */
  send(req: SentRequest, send: () => Promise<Response>): Promise<Response>;
  /** A wait on an operation made through this transport ended, final or not (timed out, aborted). */
  ended?(op: OperationObject): Promise<void>;
  /** The longest wait on an operation whose waiter names no bound (ms). Default: no bound. */
  waitLimitMs?: number;
}

/** Methods that change nothing on the server. */
const reads = new Set(['GET', 'HEAD']);

/**
 * A transport every mutating request of which passes through a {@link CallWatch}, so that whoever
 * holds a client on it (an action) cannot send one the watch does not see. It sends through the
 * transport it wraps (sharing its connections and its failover) and closes it only when it made it.
 */
export class ActingTransport extends Transport {
  // ES private: an action holding this transport cannot reach the one it wraps, even from plain JavaScript.
  readonly #inner: Transport;
  readonly #watch: CallWatch;
  readonly #ownsInner: boolean;
  readonly #note: Record<string, unknown> | undefined;

  constructor(inner: Transport, watch: CallWatch, ownsInner = false, note?: Record<string, unknown>) {
    super(inner.target);
    this.#inner = inner;
    this.#watch = watch;
    this.#ownsInner = ownsInner;
    this.#note = note;
  }

  /** The same watch and connections, with `note` given to the watch with each request. */
  noting(note: Record<string, unknown>): ActingTransport {
    return new ActingTransport(this.#inner, this.#watch, false, { ...this.#note, ...note });
  }

  override get activeOrigin(): string {
    return this.#inner.activeOrigin;
  }

  override get activeTarget(): Transport['activeTarget'] {
    return this.#inner.activeTarget;
  }

  override failover(origin: string, why?: string): void {
    this.#inner.failover(origin, why);
  }

  override learnAddresses(urls: readonly string[]): void {
    this.#inner.learnAddresses(urls);
  }

  override request(method: string, path: string, opts: RequestOptions = {}): Promise<Response> {
    const send = () => this.#inner.request(method, path, opts);
    if (reads.has(method.toUpperCase())) return send();
    const req: SentRequest = {
      method: method.toUpperCase(),
      path,
      ...(opts.body === undefined ? {} : { body: opts.body }),
      ...(this.#note ? { note: this.#note } : {}),
    };
    return this.#watch.send(req, send);
  }

  override async operationEnded(op: OperationObject): Promise<void> {
    await this.#watch.ended?.(op);
  }

  override get operationWaitLimitMs(): number | undefined {
    return this.#watch.waitLimitMs;
  }

  override async close(): Promise<void> {
    await super.close();
    if (this.#ownsInner) await this.#inner.close();
  }
}

/**
 * Dry-run, the one way: a watch that sends no mutating request. `record` is told what would have
 * been sent; the request then fails with DRY_RUN_REFUSED (not retryable), so the caller stops there.
 */
export function dryRunWatch(record: (req: SentRequest) => Promise<void> | void): CallWatch {
  return {
    async send(req) {
      await record(req);
      throw new ReflexError('DRY_RUN_REFUSED', `dry-run: ${req.method} ${req.path} recorded, not sent`);
    },
  };
}
