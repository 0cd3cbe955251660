import { StringDecoder } from 'node:string_decoder';
import type { TLSSocket } from 'node:tls';
import { Agent, buildConnector, request as undiciRequest, errors as undiciErrors } from 'undici';
import { ReflexError } from '../errors/reflex-error.js';
import { DAEMON_JSON_MAX_DEPTH } from '../input/json-bounds.js';
import { parseLargeJson } from '../input/large-json.js';
import { ApiError, apiErrorFromEnvelope } from './api-error.js';
import { envelopeSchema, type AsyncEnvelope, type OperationObject, type SyncEnvelope } from './envelope.js';
import { targetAddresses, type Target } from './target.js';
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
  /**
   * Told when a cluster target moves to its next address because `from` did not answer (a call or
   * the event stream): the process logs it, so an operator sees which member Reflex talks to.
   */
  onFailover?: (move: { from: string; to: string; why: string }) => void;
}

/** The SHA-256 pin of an HTTPS target: from its server certificate file or fingerprint. */
export function targetPin(target: Target): string | undefined {
  if (target.kind !== 'https') return undefined;
  if (target.serverFingerprint) return normalizeFingerprint(target.serverFingerprint);
  if (target.serverCert) return certificateFingerprint(target.serverCert);
  return undefined;
}

/** Error codes of the system calls and TLS layer that mean no connection was made: nothing was sent. */
const notConnectedCodes = new Set([
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENOENT',
  'UND_ERR_CONNECT_TIMEOUT',
  'TLS_PIN_MISMATCH',
]);
/** Codes of a connection cut or gone bad after it was made: the request may have reached the server. */
const connectionLostCodes = new Set([
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ECONNABORTED',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

function errorCodes(err: unknown): string[] {
  const codes: string[] = [];
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
  }
  return codes;
}

/** Whether a failure happened before any byte of the request could reach the server (refused, unreachable, TLS handshake). */
function neverConnected(err: unknown): boolean {
  // TLS handshake failures: Node's (ERR_TLS_*, ERR_SSL_*, EPROTO) and OpenSSL's certificate checks.
  return errorCodes(err).some(
    (c) =>
      notConnectedCodes.has(c) ||
      c === 'EPROTO' ||
      /^(ERR_TLS_|ERR_SSL_|UNABLE_TO_|CERT_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN)/.test(c),
  );
}

/**
 * Whether a failure says the address is unreachable or the connection to it broke (refused,
 * timeout, TLS or socket error), as opposed to an answer of the server (HTTP 4xx/5xx) or the
 * caller's abort: the failures that make a cluster target move to its next address.
 */
export function isConnectionFailure(err: unknown): boolean {
  if (neverConnected(err)) return true;
  if (errorCodes(err).some((c) => connectionLostCodes.has(c))) return true;
  // ws says so in its message only: a handshake that never finished.
  return /Opening handshake has timed out|socket hang up/.test((err as Error)?.message ?? '');
}

/** Methods the server treats as reads: safe to send again to another member after a cut connection. */
const idempotentMethods = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * HTTP to the instance API: envelopes, errors and ETags, nothing about instances. One pooled
 * keep-alive undici Agent per transport; every call has a timeout and honours an abort signal.
 *
 * A cluster target (several addresses) uses one address at a time. A connection failure moves it
 * to the next one; the call is sent again there only when it cannot have reached the first (no
 * connection was made) or is a read. A write cut after it was sent fails with NETWORK/TIMEOUT as
 * with one address: it may have been carried out, so whoever retries it re-reads state first.
 */
export class Transport {
  readonly target: Target;
  private readonly agent: Agent;
  /** Addresses in failover order: configured ones, then those learnt from the cluster's members. */
  private readonly origins: string[];
  private current = 0;
  private readonly timeoutMs: number;
  private readonly onFailover: TransportOptions['onFailover'];

  constructor(target: Target, opts: TransportOptions = {}) {
    this.target = target;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.onFailover = opts.onFailover;
    const keepAliveTimeout = opts.keepAliveMs ?? 10_000;
    if (target.kind === 'unix') {
      this.agent = new Agent({ connect: { socketPath: target.socketPath }, keepAliveTimeout });
      this.origins = ['http://lxd'];
      return;
    }
    this.origins = [...targetAddresses(target)];
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

  /** The address calls go to now (`https://host:port`; `http://lxd` over a unix socket). */
  get activeOrigin(): string {
    return this.origins[this.current]!;
  }

  /** The target as seen at the address in use: what the event stream connects to. */
  get activeTarget(): Target {
    const t = this.target;
    return t.kind === 'https' && this.activeOrigin !== t.origin ? { ...t, origin: this.activeOrigin } : t;
  }

  /**
   * Says that `origin` did not answer: the next call goes to the next address. A no-op when
   * another failure already moved on, so concurrent failures skip one address, not several.
   */
  failover(origin: string, why = 'did not answer'): void {
    if (this.origins.length <= 1 || this.activeOrigin !== origin) return;
    this.current = (this.current + 1) % this.origins.length;
    this.onFailover?.({ from: origin, to: this.activeOrigin, why });
  }

  /**
   * Adds addresses of a cluster target learnt from its members (`url` of `/1.0/cluster/members`),
   * after the configured ones, so one configured address is enough to fail over. Ignored for a
   * unix socket, whose client has no certificate to present elsewhere.
   */
  learnAddresses(urls: readonly string[]): void {
    if (this.target.kind !== 'https') return;
    for (const url of urls) {
      let origin: string;
      try {
        origin = new URL(url).origin;
      } catch {
        continue;
      }
      if (origin.startsWith('https://') && !this.origins.includes(origin)) this.origins.push(origin);
    }
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
    const tried = new Set<string>();
    let res;
    let text: string;
    for (;;) {
      const origin = this.activeOrigin;
      tried.add(origin);
      try {
        res = await undiciRequest(origin + path, { method: method as 'GET', headers, body, signal, dispatcher: this.agent });
        text = await bodyText(res.body);
        break;
      } catch (err) {
        const failure = this.networkError(err, timeout.aborted, method, path, opts.signal);
        if (failure.code === 'ABORTED' || !isConnectionFailure(err)) throw failure;
        this.failover(origin, `${method} ${path}: ${failure.message}`);
        const resend = neverConnected(err) || idempotentMethods.has(method);
        if (!resend || signal.aborted || tried.has(this.activeOrigin)) throw failure;
      }
    }
    // The daemon is a peer like any other: a body nested too deep to walk is refused before it is
    // built. A large one (the listing of thousands of instances) is parsed in steps that let the
    // event loop turn between them (src/input/large-json.ts).
    let json;
    try {
      json = await parseLargeJson(text, { maxDepth: DAEMON_JSON_MAX_DEPTH });
    } catch (err) {
      if (res.statusCode === 403 || res.statusCode === 401) throw this.authError(res.statusCode, text.trim(), method, path);
      // An error status with a plain body (LXD's text/plain 400 on /1.0/events, a proxy's 502) is still that error.
      if (res.statusCode >= 400) throw apiErrorFromEnvelope(res.statusCode, text.trim().slice(0, 200) || 'no body', res.statusCode, method, path);
      throw new ApiError('API_BAD_RESPONSE', `${method} ${path}: HTTP ${res.statusCode} with a body that is not JSON: ${text.slice(0, 200)}`, {
        status: res.statusCode,
        method,
        path,
        cause: err,
      });
    }
    if (!json.ok)
      throw new ApiError('API_BAD_RESPONSE', `${method} ${path}: HTTP ${res.statusCode} with a body refused: ${json.problem}`, {
        status: res.statusCode,
        method,
        path,
      });
    const parsed = envelopeSchema.safeParse(json.value);
    if (!parsed.success) {
      throw new ApiError(
        'API_BAD_RESPONSE',
        `${method} ${path}: HTTP ${res.statusCode} with a body that is not an envelope: ${parsed.error.message}`,
        { status: res.statusCode, method, path },
      );
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

  /**
   * Told by an operation handle made on this transport when a wait on it ends, final or not (the
   * acting transport records the end of the operations it sent). Does nothing here.
   */
  async operationEnded(_op: OperationObject): Promise<void> {}

  /** The longest wait on an operation whose waiter names no bound (ms). None here: no bound. */
  get operationWaitLimitMs(): number | undefined {
    return undefined;
  }

  /** Closes the pooled connections. */
  async close(): Promise<void> {
    await this.agent.close();
  }

  private networkError(err: unknown, timedOutBySelf: boolean, method: string, path: string, callerSignal: AbortSignal | undefined): ApiError {
    const pinned = findReflexCause(err);
    if (pinned) return new ApiError(pinned.code, pinned.message, { method, path, cause: err });
    if (callerSignal?.aborted && !timedOutBySelf)
      return new ApiError('ABORTED', `${method} ${path}: aborted by the caller`, { method, path, cause: callerSignal.reason ?? err });
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
      return new ApiError(
        'TLS_CLIENT_CERT_MISSING',
        `${method} ${path}: ${status} ${message}: no client certificate is configured for ${this.activeOrigin}; the server only serves trusted clients (configure client.crt/client.key and add it with \`lxc config trust add\`)`,
        { status, errorCode: status, method, path },
      );
    }
    return new ApiError(
      'TLS_CLIENT_UNTRUSTED',
      `${method} ${path}: ${status} ${message}: the server does not trust the client certificate ${certificateFingerprint(t.cert)} (add it with \`lxc config trust add\`)`,
      { status, errorCode: status, method, path },
    );
  }
}

/**
 * The body as text, decoded chunk by chunk as it arrives (a leading byte-order mark dropped, as
 * undici's `text()` does). `text()` keeps every chunk until the end and joins them into one
 * buffer the size of the body: for the 27 MB listing of 10 000 instances that is 54 MB of
 * native memory at once, which the allocator keeps after it is freed (the resident size of a
 * worker tracking 10k instances stayed ~55 MB above one tracking 10). Decoded as they come,
 * the chunks are garbage at once and the text lives in the JavaScript heap, which shrinks back.
 */
async function bodyText(body: AsyncIterable<Buffer>): Promise<string> {
  const decoder = new StringDecoder('utf8');
  let text = '';
  for await (const chunk of body) text += decoder.write(chunk);
  text += decoder.end();
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

function findReflexCause(err: unknown): ReflexError | undefined {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof ReflexError) return e;
  }
  return undefined;
}
