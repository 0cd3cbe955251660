import { ApiError } from './api-error.js';
import { operationSchema, type OperationObject } from './envelope.js';
import { StatusCode, isFinalOperationCode } from './status-code.js';
import type { Transport } from './transport.js';

/** Options of {@link Operation.wait}. */
export interface WaitOptions {
  /** Give up after this many milliseconds overall. Default: no limit. */
  timeoutMs?: number;
  /** Seconds each long-poll asks the server to hold the request. Default 30. */
  pollSeconds?: number;
  signal?: AbortSignal;
}

/**
 * A handle on a background operation: the object as last seen, and `wait`. Separate from the REST
 * calls on /1.0/operations, as in the LXD Go client.
 */
export class Operation {
  private current: OperationObject;

  constructor(
    private readonly transport: Transport,
    initial: OperationObject,
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

  /**
   * Long-polls `/1.0/operations/<id>/wait` until the operation is final. Resolves with the
   * final object on Success; throws OPERATION_FAILED / OPERATION_CANCELLED otherwise, and
   * OPERATION_VANISHED when the operation is gone (404) before its outcome was read.
   */
  async wait(opts: WaitOptions = {}): Promise<OperationObject> {
    const deadline = opts.timeoutMs === undefined ? Infinity : Date.now() + opts.timeoutMs;
    const path = `/1.0/operations/${encodeURIComponent(this.id)}/wait`;
    while (!isFinalOperationCode(this.current.status_code)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new ApiError('TIMEOUT', `operation ${this.id} still ${this.current.status} after ${opts.timeoutMs} ms`, { method: 'GET', path });
      const seconds = Math.max(1, Math.min(opts.pollSeconds ?? 30, Math.ceil(left / 1000)));
      let res;
      try {
        res = await this.transport.request('GET', `${path}?timeout=${seconds}`, { signal: opts.signal, timeoutMs: seconds * 1000 + 10_000 });
      } catch (err) {
        if (err instanceof ApiError && err.status === 404) {
          throw new ApiError('OPERATION_VANISHED', `operation ${this.id} disappeared (404) while ${this.current.status}; its outcome was not seen (the server forgets finished operations after ~5 s)`, { status: 404, method: 'GET', path, cause: err });
        }
        throw err;
      }
      // A newer LXD may answer 200 with an error envelope in the body: the transport throws that already.
      if (res.kind === 'sync') this.current = operationSchema.parse(res.envelope.metadata);
    }
    return settle(this.current);
  }
}

function settle(op: OperationObject): OperationObject {
  const path = `/1.0/operations/${op.id}`;
  if (op.status_code === StatusCode.Success) return op;
  if (op.status_code === StatusCode.Cancelled) throw new ApiError('OPERATION_CANCELLED', `operation ${op.id} (${op.description}) was cancelled`, { method: 'GET', path });
  throw new ApiError(
    /busy running|is busy/i.test(op.err) ? 'API_BUSY' : 'OPERATION_FAILED',
    `operation ${op.id} (${op.description}) failed: ${op.err || op.status}`,
    { method: 'GET', path, status: undefined },
  );
}
