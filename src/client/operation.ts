import { ApiError } from './api-error.js';
import { operationInstanceUrls, operationSecrets, type OperationObject } from './envelope.js';
import type { OperationSubscription } from './operation-feed.js';
import { cancelOperation, getOperationObject, operationPath, waitOperationObject } from './operations.js';
import { StatusCode, isFinalOperationCode } from './status-code.js';
import type { Transport } from './transport.js';

/** Called whenever an operation's metadata (progress) changes while it is waited on. */
export type ProgressListener = (metadata: unknown, op: OperationObject) => void;

/** Options of {@link Operation.wait}. */
export interface WaitOptions {
  /** Give up after this many milliseconds overall (OPERATION_TIMEOUT). Default: no limit. */
  timeoutMs?: number;
  /**
   * Seconds each long-poll asks the server to hold the request; with an event subscription,
   * how long to go without an event before re-reading the operation. Default 30.
   */
  pollSeconds?: number;
  signal?: AbortSignal;
  /** Called on every change of the operation's metadata. */
  onProgress?: ProgressListener;
}

/**
 * A handle on a background operation: the object as last seen, wait, cancel, progress. Separate
 * from the REST calls on /1.0/operations (operations.ts), as in the LXD Go client. When the call
 * that created it had subscribed to operation events first, waiting is event-driven, with
 * long-polling as the fallback when the event socket is lost.
 */
export class Operation {
  private current: OperationObject;
  private seen = false;
  private readonly progress = new Set<ProgressListener>();

  constructor(
    private readonly transport: Transport,
    initial: OperationObject,
    private readonly subscription?: OperationSubscription,
    private readonly project?: string,
  ) {
    this.current = initial;
  }

  get id(): string {
    return this.current.id;
  }

  /** The operation object as last seen. */
  get value(): OperationObject {
    return this.current;
  }

  /** Whether waiting follows operation events (subscribed before the request) rather than long-polling. */
  get eventDriven(): boolean {
    return Boolean(this.subscription && !this.subscription.isLost);
  }

  /** Whether the last seen state is final (Success, Failure or Cancelled). */
  get done(): boolean {
    return isFinalOperationCode(this.current.status_code);
  }

  /** URLs of the affected instances, from either the `instances` or the legacy `containers` key. */
  get instanceUrls(): string[] {
    return operationInstanceUrls(this.current);
  }

  /** The `fds` secrets of a websocket-class operation (exec, console); undefined for other classes. */
  get secrets(): Record<string, string> | undefined {
    return operationSecrets(this.current);
  }

  /** Registers a progress listener for every later wait; returns the function that removes it. */
  onProgress(listener: ProgressListener): () => void {
    this.progress.add(listener);
    return () => this.progress.delete(listener);
  }

  /** Re-reads the operation. Throws OPERATION_VANISHED when it is gone before its outcome was seen. */
  async refresh(signal?: AbortSignal): Promise<OperationObject> {
    try {
      this.update(await getOperationObject(this.transport, this.id, { project: this.project, signal }));
    } catch (err) {
      throw this.vanishedOr(err, 'GET', operationPath(this.id));
    }
    return this.current;
  }

  /**
   * Waits until the operation is final. Resolves with the final object on Success; throws
   * OPERATION_FAILED (with the server's err) / OPERATION_CANCELLED otherwise,
   * OPERATION_VANISHED when the server forgot the operation (~5 s after it finished) before its
   * outcome was read, and OPERATION_TIMEOUT when `timeoutMs` passes first.
   */
  async wait(opts: WaitOptions = {}): Promise<OperationObject> {
    const stop = opts.onProgress ? this.onProgress(opts.onProgress) : undefined;
    const timeoutMs = opts.timeoutMs ?? this.transport.operationWaitLimitMs;
    try {
      const deadline = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs;
      const pollSeconds = opts.pollSeconds ?? 30;
      while (!this.done) {
        if (opts.signal?.aborted) {
          throw new ApiError('ABORTED', `waiting for operation ${this.id} aborted by the caller`, {
            method: 'GET',
            path: operationPath(this.id),
            cause: opts.signal.reason,
          });
        }
        const left = deadline - Date.now();
        if (left <= 0) {
          throw new ApiError(
            'OPERATION_TIMEOUT',
            `operation ${this.id} still ${this.current.status} (${this.current.status_code}) after ${timeoutMs} ms`,
            { method: 'GET', path: operationPath(this.id) },
          );
        }
        const sub = this.subscription;
        if (sub && !sub.isLost) {
          const heard = sub.get(this.id);
          if (heard && isNewer(heard, this.current)) {
            this.update(heard);
            continue;
          }
          // Silence for pollSeconds: re-read, in case an event was lost (the daemon drops slow listeners).
          if (await sub.changed(Math.min(left, pollSeconds * 1000), opts.signal)) await this.refresh(opts.signal);
          continue;
        }
        const seconds = Math.max(1, Math.min(pollSeconds, Math.ceil(left / 1000)));
        try {
          const op = await waitOperationObject(this.transport, this.id, seconds, { project: this.project, signal: opts.signal });
          if (op) this.update(op);
        } catch (err) {
          if (err instanceof ApiError && err.status !== undefined && err.status < 400) {
            // Newer LXD: the operation's own failure as an error envelope under HTTP 200.
            this.current = { ...this.current, status: 'Failure', status_code: StatusCode.Failure, err: err.message };
            break;
          }
          throw this.vanishedOr(err, 'GET', `${operationPath(this.id)}/wait`);
        }
      }
      return settle(this.current);
    } finally {
      stop?.();
      if (this.done) this.subscription?.release();
      await this.transport.operationEnded(this.current);
    }
  }

  /**
   * Cancels the operation (DELETE). Refused without a request when the last seen state says
   * `may_cancel: false` (OPERATION_NOT_CANCELLABLE), as the server would answer 400.
   */
  async cancel(signal?: AbortSignal): Promise<void> {
    const path = operationPath(this.id);
    if (!this.current.may_cancel) {
      throw new ApiError(
        'OPERATION_NOT_CANCELLABLE',
        `operation ${this.id} (${this.current.description}) cannot be cancelled: the server reports may_cancel false`,
        { method: 'DELETE', path },
      );
    }
    try {
      await cancelOperation(this.transport, this.id, { project: this.project, signal });
    } catch (err) {
      throw this.vanishedOr(err, 'DELETE', path);
    }
  }

  /** Stops listening to operation events for this handle (waiting releases it by itself). */
  release(): void {
    this.subscription?.release();
  }

  private update(op: OperationObject): void {
    const metadataChanged = JSON.stringify(op.metadata) !== JSON.stringify(this.current.metadata);
    this.current = op;
    this.seen = true;
    if (metadataChanged) for (const l of this.progress) l(op.metadata, op);
  }

  private vanishedOr(err: unknown, method: string, path: string): unknown {
    if (!(err instanceof ApiError) || err.status !== 404) return err;
    const how = this.seen ? 'after it was last seen' : 'after it was created';
    return new ApiError(
      'OPERATION_VANISHED',
      `operation ${this.id} disappeared (404) ${how} while ${this.current.status} (${this.current.status_code}); its outcome was not seen (the server forgets finished operations after ~5 s)`,
      { status: 404, errorCode: err.errorCode, method, path, cause: err },
    );
  }
}

/** Events are unordered (notes §1): a final state always wins, otherwise the later `updated_at`. */
function isNewer(candidate: OperationObject, current: OperationObject): boolean {
  if (isFinalOperationCode(current.status_code)) return false;
  if (isFinalOperationCode(candidate.status_code)) return true;
  return Date.parse(candidate.updated_at) > Date.parse(current.updated_at);
}

function settle(op: OperationObject): OperationObject {
  const path = operationPath(op.id);
  if (op.status_code === StatusCode.Success) return op;
  if (op.status_code === StatusCode.Cancelled)
    throw new ApiError('OPERATION_CANCELLED', `operation ${op.id} (${op.description}) was cancelled`, { method: 'GET', path });
  throw new ApiError(
    /busy running|is busy/i.test(op.err) ? 'API_BUSY' : 'OPERATION_FAILED',
    `operation ${op.id} (${op.description}) failed: ${op.err || op.status}`,
    { method: 'GET', path, status: undefined, errorCode: op.status_code },
  );
}
