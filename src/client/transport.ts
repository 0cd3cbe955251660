import { Agent, request as undiciRequest, errors as undiciErrors } from 'undici';
import { ApiError, apiErrorFromEnvelope } from './api-error.js';
import { envelopeSchema, type AsyncEnvelope, type SyncEnvelope } from './envelope.js';
import type { Target } from './target.js';

/** Options of one request. */
export interface RequestOptions {
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Milliseconds before the call is aborted. Default: the transport's timeout (30 s). */
  timeoutMs?: number;
}

/** A decoded answer: sync or async envelope plus the headers the caller may need (ETag, Location). */
export type Response =
  | { kind: 'sync'; status: number; envelope: SyncEnvelope; etag: string | undefined }
  | { kind: 'async'; status: number; envelope: AsyncEnvelope; location: string };

/**
 * HTTP to the instance API: envelopes and errors, nothing about instances. One pooled keep-alive
 * undici Agent per transport.
 */
export class Transport {
  readonly target: Target;
  private readonly agent: Agent;
  private readonly origin: string;
  private readonly timeoutMs: number;

  constructor(target: Target, opts: { timeoutMs?: number } = {}) {
    this.target = target;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    if (target.kind === 'unix') {
      this.agent = new Agent({ connect: { socketPath: target.socketPath }, keepAliveTimeout: 10_000 });
      this.origin = 'http://lxd';
    } else {
      this.agent = new Agent({
        connect: { cert: target.cert, key: target.key, ca: target.serverCert, rejectUnauthorized: Boolean(target.serverCert) },
        keepAliveTimeout: 10_000,
      });
      this.origin = target.origin;
    }
  }

  /** Sends a request and decodes the envelope; error envelopes and transport failures throw ApiError. */
  async request(method: string, path: string, opts: RequestOptions = {}): Promise<Response> {
    const timeout = AbortSignal.timeout(opts.timeoutMs ?? this.timeoutMs);
    const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
    const headers: Record<string, string> = { ...opts.headers };
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] = 'application/json';
    }
    let res;
    try {
      res = await undiciRequest(this.origin + path, { method: method as 'GET', headers, body, signal, dispatcher: this.agent });
    } catch (err) {
      const timedOut = timeout.aborted || err instanceof undiciErrors.HeadersTimeoutError;
      throw new ApiError(timedOut ? 'TIMEOUT' : 'NETWORK', `${method} ${path}: ${timedOut ? 'timed out' : (err as Error).message}`, { method, path, cause: err });
    }
    const text = await res.body.text();
    let parsed;
    try {
      parsed = envelopeSchema.safeParse(JSON.parse(text));
    } catch (err) {
      throw new ApiError('API_BAD_RESPONSE', `${method} ${path}: HTTP ${res.statusCode} with a body that is not JSON: ${text.slice(0, 200)}`, { status: res.statusCode, method, path, cause: err });
    }
    if (!parsed.success) {
      throw new ApiError('API_BAD_RESPONSE', `${method} ${path}: HTTP ${res.statusCode} with a body that is not an envelope: ${parsed.error.message}`, { status: res.statusCode, method, path });
    }
    const env = parsed.data;
    if (env.type === 'error') throw apiErrorFromEnvelope(res.statusCode, env.error, env.error_code, method, path);
    if (res.statusCode >= 400) throw apiErrorFromEnvelope(res.statusCode, `unexpected ${env.type} envelope`, res.statusCode, method, path);
    if (env.type === 'async') {
      const loc = res.headers.location;
      return { kind: 'async', status: res.statusCode, envelope: env, location: (Array.isArray(loc) ? loc[0] : loc) ?? env.operation };
    }
    const etag = res.headers.etag;
    return { kind: 'sync', status: res.statusCode, envelope: env, etag: Array.isArray(etag) ? etag[0] : etag };
  }

  /** Closes the pooled connections. */
  async close(): Promise<void> {
    await this.agent.close();
  }
}
