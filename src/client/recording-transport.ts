import { ReflexError } from '../errors/reflex-error.js';
import { Transport, type RequestOptions, type Response } from './transport.js';

/** A mutating request a dry-run wanted to send. */
export interface RecordedCall {
  method: string;
  path: string;
  body?: unknown;
}

/**
 * A transport for dry-runs and replays: reads (GET) go to the server, every other request is
 * recorded and refused without being sent, so nothing can change on the server.
 */
export class RecordingTransport extends Transport {
  readonly recorded: RecordedCall[] = [];

  override async request(method: string, path: string, opts: RequestOptions = {}): Promise<Response> {
    if (method.toUpperCase() === 'GET') return super.request(method, path, opts);
    this.recorded.push({ method, path, ...(opts.body === undefined ? {} : { body: opts.body }) });
    throw new ReflexError('DRY_RUN_REFUSED', `dry-run: ${method} ${path} recorded, not sent`);
  }
}
