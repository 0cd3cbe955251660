import type { TLSSocket } from 'node:tls';
import { Agent, buildConnector, request as undiciRequest, errors as undiciErrors } from 'undici';
import { ReflexError } from '../errors/reflex-error.js';
import { ApiError, apiErrorFromEnvelope } from './api-error.js';
import { envelopeSchema, type AsyncEnvelope, type SyncEnvelope } from './envelope.js';
import type { Target } from './target.js';
import { certificateFingerprint, checkPin, normalizeFingerprint } from './tls-pin.js';

/** Options of one request. */
export interface RequestOptions {
  body?: unknown;
  headers?: Record<string, string>;
  /** ETag read earlier, sent as If-Match (PUT, PATCH). */
  ifMatch?: string;
  signal?: AbortSignal;
  /** Milliseconds before the call is aborted. Default: the transport's timeout (30 s). */
  timeoutMs?: number;
}

/** A decoded answer: sync or async envelope plus the headers the caller may need (ETag, Location). */
export type Response =
  | { kind: 'sync'; status: number; envelope: SyncEnvelope; etag: string | undefined }
  | { kind: 'async'; status: number; envelope: AsyncEnvelope; location: string };

/** Options of {@link Transport}. */
export interface TransportOptions {
  /** Default per-call timeout in milliseconds. Default 30 000. */
  timeoutMs?: number;
  /** How long an idle pooled connection is kept open. Default 10 000 ms. */
  keepAliveMs?: number;
}

/** The SHA-256 pin of an HTTPS target: from its server certificate file or fingerprint. */
export function targetPin(target: Target): string | undefined {
  if (target.kind !== 'https') return undefined;
  if (target.serverFingerprint) return normalizeFingerprint(target.serverFingerprint);
  if (target.serverCert) return certificateFingerprint(target.serverCert);
  return undefined;
}

/**
 * HTTP to the instance API: envelopes, errors and ETags, nothing about instances. One pooled
 * keep-alive undici Agent per transport; every call has a timeout and honours an abort signal.
 */
export class Transport {
  readonly target: Target;
  private readonly agent: Agent;
  private readonly origin: string;
  private readonly timeoutMs: number;

  constructor(target: Target, opts: TransportOptions = {}) {
    this.target = target;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    const keepAliveTimeout = opts.keepAliveMs ?? 10_000;
    if (target.kind === 'unix') {
      this.agent = new Agent({ connect: { socketPath: target.socketPath }, keepAliveTimeout });
      this.origin = 'http://lxd';
      return;
    }
    this.origin = target.origin;
    const pin = targetPin(target);
    if (!pin) {
      this.agent = new Agent({ connect: { cert: target.cert, key: target.key }, keepAliveTimeout });
      return;
    }
    // A resumed TLS session shows no peer certificate to check, so every connection does a full handshake.
    const connector = buildConnector({ cert: target.cert, key: target.key, rejectUnauthorized: false, maxCachedSessions: 0 });
    this.agent = new Agent({
      keepAliveTimeout,
      connect: (options, callback) =>
        connector(options, (err, socket) => {
          if (err || !socket) return callback(err ?? new Error('no socket'), null);
          const mismatch = checkPin(socket as TLSSocket, pin, `${options.hostname}:${options.port}`);
          if (!mismatch) return callback(null, socket);
          socket.destroy();
          callback(mismatch, null);
        }),
    });
  }

  /** Sends a request and decodes the envelope; error envelopes and transport failures throw ApiError. */
  async request(method: string, path: string, opts: RequestOptions = {}): Promise<Response> {
    const timeout = AbortSignal.timeout(opts.timeoutMs ?? this.timeoutMs);
    const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.ifMatch) headers['if-match'] = opts.ifMatch;
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] = 'application/json';
    }
    let res;
    try {
      res = await undiciRequest(this.origin + path, { method: method as 'GET', headers, body, signal, dispatcher: this.agent });
    } catch (err) {
      throw this.networkError(err, timeout.aborted, method, path, opts.signal);
    }
    let text: string;
    try {
      text = await res.body.text();
    } catch (err) {
      throw this.networkError(err, timeout.aborted, method, path, opts.signal);
    }
    let parsed;
    try {
      parsed = envelopeSchema.safeParse(JSON.parse(text));
    } catch (err) {
      if (res.statusCode === 403 || res.statusCode === 401) throw this.authError(res.statusCode, text.trim(), method, path);
      // An error status with a plain body (LXD's text/plain 400 on /1.0/events, a proxy's 502) is still that error.
      if (res.statusCode >= 400) throw apiErrorFromEnvelope(res.statusCode, text.trim().slice(0, 200) || 'no body', res.statusCode, method, path);
      throw new ApiError('API_BAD_RESPONSE', `${method} ${path}: HTTP ${res.statusCode} with a body that is not JSON: ${text.slice(0, 200)}`, { status: res.statusCode, method, path, cause: err });
    }
    if (!parsed.success) {
      throw new ApiError('API_BAD_RESPONSE', `${method} ${path}: HTTP ${res.statusCode} with a body that is not an envelope: ${parsed.error.message}`, { status: res.statusCode, method, path });
    }
    const env = parsed.data;
    if (env.type === 'error') {
      if (env.error_code === 403 || res.statusCode === 403) throw this.authError(res.statusCode, env.error, method, path);
      throw apiErrorFromEnvelope(res.statusCode, env.error, env.error_code, method, path);
    }
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

  private networkError(err: unknown, timedOutBySelf: boolean, method: string, path: string, callerSignal: AbortSignal | undefined): ApiError {
    const pinned = findReflexCause(err);
    if (pinned) return new ApiError(pinned.code, pinned.message, { method, path, cause: err });
    if (callerSignal?.aborted && !timedOutBySelf) return new ApiError('ABORTED', `${method} ${path}: aborted by the caller`, { method, path, cause: callerSignal.reason ?? err });
    const timedOut = timedOutBySelf || err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError;
    const msg = timedOut ? 'timed out' : (err as Error).message;
    return new ApiError(timedOut ? 'TIMEOUT' : 'NETWORK', `${method} ${path}: ${msg}`, { method, path, cause: err });
  }

  /**
   * Over HTTPS a 403 almost always means the daemon does not trust this client: say which of the
   * two cases it is (no certificate configured, or one the server does not know).
   */
  private authError(status: number, message: string, method: string, path: string): ApiError {
    const t = this.target;
    if (t.kind !== 'https') return apiErrorFromEnvelope(status, message, status, method, path);
    if (!t.cert || !t.key) {
      return new ApiError('TLS_CLIENT_CERT_MISSING', `${method} ${path}: ${status} ${message}: no client certificate is configured for ${t.origin}; the server only serves trusted clients (configure client.crt/client.key and add it with \`lxc config trust add\`)`, { status, errorCode: status, method, path });
    }
    return new ApiError('TLS_CLIENT_UNTRUSTED', `${method} ${path}: ${status} ${message}: the server does not trust the client certificate ${certificateFingerprint(t.cert)} (add it with \`lxc config trust add\`)`, { status, errorCode: status, method, path });
  }
}

function findReflexCause(err: unknown): ReflexError | undefined {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof ReflexError) return e;
  }
  return undefined;
}
