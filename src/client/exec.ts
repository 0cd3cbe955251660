import type WebSocket from 'ws';
import { ApiError } from './api-error.js';
import { webSocketClass } from './web-socket.js';
import type { OperationObject } from './envelope.js';
import { eventsEndpoint } from './events.js';
import { instancePath } from './instances.js';
import type { Operation, WaitOptions } from './operation.js';
import { operationPath } from './operations.js';
import type { Scope } from './scope.js';

/**
 * `POST /1.0/instances/<name>/exec`, non-interactive, with `wait-for-websocket`: the daemon
 * answers a websocket-class operation whose metadata holds one secret per stream (fds 0, 1, 2 and
 * control); the command starts once 0, 1 and 2 are connected. Stdin is closed at once (an empty
 * text message ends a stream), stdout and stderr are read up to a bound each, and the exit code
 * arrives as the operation's `metadata.return`. As in LXD's Go client (`ExecInstance`) and daemon
 * (`lxd/instance_exec.go`, 5.0.2): closing the control socket makes the daemon SIGKILL the command,
 * so it stays open until the daemon closes it.
 */

/** Body of an exec request, as far as Reflex sends it. */
export interface ExecRequest {
  /** Program and arguments; not run through a shell unless it is one (`['sh', '-c', '…']`). */
  command: string[];
  /** Added to the daemon's defaults (PATH, HOME, USER, LANG and the instance's `environment.*`). */
  environment?: Record<string, string>;
  /** UID to run as (API extension `container_exec_user_group_cwd`). Default: root. */
  user?: number;
  /** GID to run as (same extension). Default: root. */
  group?: number;
  /** Working directory (same extension). Default: the daemon's (`/root` for root). */
  cwd?: string;
}

/** Options of {@link startExec}. */
export interface ExecOptions {
  /** After this many ms the command is sent SIGKILL and the run counts as timed out. Default: no limit. */
  timeoutMs?: number;
  /** Bytes kept of stdout and of stderr each (the first ones); the rest is counted, not kept. Default 8192. */
  maxOutputBytes?: number;
  /** How long after the kill the streams may take to end before every socket is closed. Default 5000 ms. */
  killGraceMs?: number;
  /** Bytes the command reads on stdin before its end. Default: none (stdin closed at once). */
  stdin?: string | Buffer;
  signal?: AbortSignal;
}

/** What the command wrote and how the run ended on the client's side. */
export interface ExecOutput {
  stdout: string;
  stderr: string;
  /** Bytes written in all (kept or not). */
  stdoutBytes: number;
  stderrBytes: number;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  /** The timeout passed: the command was sent SIGKILL. */
  timedOut: boolean;
  /** From the request to the end of the streams. */
  durationMs: number;
}

/** A finished exec: its output, and the exit code the daemon reported (undefined when the operation did not end). */
export interface ExecResult extends ExecOutput {
  exitCode: number | undefined;
  operation: OperationObject;
}

/** SIGKILL, as the control socket takes it (`{"command":"signal","signal":9}`). */
const SIGKILL = 9;
const execFds = ['0', '1', '2', 'control'] as const;

/** A running exec: the operation, its streams, and the means to kill it. */
export class ExecSession {
  private readonly chunks: Record<'1' | '2', Buffer[]> = { '1': [], '2': [] };
  private readonly kept: Record<'1' | '2', number> = { '1': 0, '2': 0 };
  private readonly total: Record<'1' | '2', number> = { '1': 0, '2': 0 };
  private timedOutFlag = false;
  private endedAt: number | undefined;
  private timeoutTimer: NodeJS.Timeout | undefined;
  private graceTimer: NodeJS.Timeout | undefined;
  private readonly sockets = new Map<string, WebSocket>();
  private readonly open = new Set<string>(['1', '2']);
  private endStreams: () => void = () => undefined;
  private readonly ended: Promise<void>;

  constructor(
    /** The exec's operation; waiting on it gives the exit code (`metadata.return`). */
    readonly operation: Operation,
    private readonly startedAt: number,
    private readonly opts: ExecOptions,
  ) {
    this.ended = new Promise((resolve) => (this.endStreams = resolve));
  }

  /**
   * Takes one stream's socket as soon as it is made, before it opens: output that follows the
   * upgrade is never emitted to nobody.
   */
  attach(name: string, ws: WebSocket): void {
    this.sockets.set(name, ws);
    ws.on('error', () => undefined);
    if (name !== '1' && name !== '2') return;
    const fd: '1' | '2' = name;
    const max = this.opts.maxOutputBytes ?? 8192;
    const end = () => {
      if (this.open.delete(fd) && this.open.size === 0) this.finishStreams();
    };
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      // An empty text message is the end of the stream (shared.WebsocketSendStream).
      if (!isBinary) return end();
      this.total[fd] += data.length;
      const room = max - this.kept[fd];
      if (room <= 0) return;
      const part = data.length > room ? data.subarray(0, room) : data;
      this.chunks[fd].push(Buffer.from(part));
      this.kept[fd] += part.length;
    });
    ws.once('close', end);
  }

  /** Starts the timeout clock, sends stdin and closes it, once every socket is open. */
  begin(): void {
    if (this.opts.timeoutMs !== undefined) this.timeoutTimer = setTimeout(() => this.timeOut(), this.opts.timeoutMs);
    this.opts.signal?.addEventListener('abort', () => this.close(), { once: true });
    const stdin = this.sockets.get('0');
    if (this.opts.stdin !== undefined && this.opts.stdin.length > 0) stdin?.send(Buffer.from(this.opts.stdin), { binary: true });
    // An empty text message ends stdin: the command reads end-of-file.
    stdin?.send('', { binary: false });
  }

  /** Whether the timeout passed and the command was sent SIGKILL. */
  get timedOut(): boolean {
    return this.timedOutFlag;
  }

  /** Sends a signal to the command through the control socket (the daemon forwards it to the command's process). */
  signal(signal: number): void {
    const control = this.sockets.get('control');
    if (control && control.readyState === control.OPEN) control.send(JSON.stringify({ command: 'signal', signal }));
  }

  /** Closes every socket now; the daemon then kills the command if it still runs. */
  close(): void {
    for (const ws of this.sockets.values()) if (ws.readyState !== ws.CLOSED) ws.terminate();
    clearTimeout(this.timeoutTimer);
    this.finishStreams();
  }

  /**
   * The streams ended (or were cut). The timeout stays armed until the session is closed: a
   * command may close its output and keep running.
   */
  private finishStreams(): void {
    this.open.clear();
    this.endedAt ??= Date.now();
    clearTimeout(this.graceTimer);
    this.endStreams();
  }

  /** The output once both streams ended (or were cut after a kill). */
  async output(): Promise<ExecOutput> {
    await this.ended;
    const text = (fd: '1' | '2') => Buffer.concat(this.chunks[fd]).toString('utf8');
    return {
      stdout: text('1'),
      stderr: text('2'),
      stdoutBytes: this.total['1'],
      stderrBytes: this.total['2'],
      stdoutTruncated: this.total['1'] > this.kept['1'],
      stderrTruncated: this.total['2'] > this.kept['2'],
      timedOut: this.timedOutFlag,
      durationMs: (this.endedAt ?? Date.now()) - this.startedAt,
    };
  }

  /**
   * The result once the operation was waited on (by {@link wait}, or by whoever holds
   * `operation`): the exit code is the operation's `return`, also when it failed (LXD fails an
   * exec whose code is 126 or 127 with "Command not executable" / "Command not found"). Incus 6.0
   * fails it the same way but, with websockets, leaves `return` out of the metadata: the error
   * text then gives the code.
   */
  async result(): Promise<ExecResult> {
    const out = await this.output();
    this.close();
    const op = this.operation.value;
    const ret = (op.metadata as { return?: unknown } | null | undefined)?.return;
    const verdict = /Command not found/.test(op.err) ? 127 : /Command not executable/.test(op.err) ? 126 : undefined;
    return { ...out, exitCode: typeof ret === 'number' ? ret : op.status_code === 400 ? verdict : undefined, operation: op };
  }

  /** Waits for the operation (its failure with an exit code is a result, not an error) and the output. */
  async wait(opts: WaitOptions = {}): Promise<ExecResult> {
    try {
      await this.operation.wait(opts);
    } catch (err) {
      if (!(err instanceof ApiError) || err.code !== 'OPERATION_FAILED' || !this.operation.done) {
        this.close();
        throw err;
      }
    }
    return this.result();
  }

  private timeOut(): void {
    // Ended at the deadline, its result not read yet: not a timeout.
    if (this.operation.done) return;
    this.timedOutFlag = true;
    this.signal(SIGKILL);
    // A child that outlived the command may still hold its output open: do not wait on it for ever.
    this.graceTimer = setTimeout(() => this.close(), this.opts.killGraceMs ?? 5_000);
  }
}

/**
 * Starts a command in an instance and connects its streams; resolves once the command can run
 * (stdin already closed). Wait on the session (or its operation) for the exit code.
 */
export async function startExec(scope: Scope, name: string, req: ExecRequest, opts: ExecOptions = {}): Promise<ExecSession> {
  if (req.command.length === 0) throw new ApiError('API_ERROR', 'exec: the command is empty', { method: 'POST', path: instancePath(name, '/exec') });
  const body = {
    command: req.command,
    environment: req.environment ?? {},
    'wait-for-websocket': true,
    interactive: false,
    ...(req.user !== undefined ? { user: req.user } : {}),
    ...(req.group !== undefined ? { group: req.group } : {}),
    ...(req.cwd !== undefined ? { cwd: req.cwd } : {}),
  };
  const startedAt = Date.now();
  const op = await scope.async('POST', scope.path(instancePath(name, '/exec')), { body, signal: opts.signal });
  const secrets = op.secrets;
  const path = operationPath(op.id);
  if (!secrets || execFds.some((fd) => !secrets[fd])) {
    op.release();
    throw new ApiError('API_BAD_RESPONSE', `POST ${instancePath(name, '/exec')}: the operation carries no secrets for fds 0, 1, 2 and control`, {
      method: 'POST',
      path,
    });
  }
  const session = new ExecSession(op, startedAt, opts);
  try {
    // Control first, as LXD's client does: a command must never run without a way to kill it.
    await openSocket(scope, op.id, secrets.control!, (ws) => session.attach('control', ws));
    await Promise.all(['0', '1', '2'].map((fd) => openSocket(scope, op.id, secrets[fd]!, (ws) => session.attach(fd, ws))));
  } catch (err) {
    session.close();
    op.release();
    throw err;
  }
  session.begin();
  return session;
}

/**
 * Opens one stream of the operation at the address the client uses, with its TLS identity and
 * pin (the events endpoint's, so both websockets connect the same way). `made` sees the socket
 * before it opens.
 */
function openSocket(scope: Scope, opId: string, secret: string, made: (ws: WebSocket) => void): Promise<WebSocket> {
  const endpoint = eventsEndpoint(scope.transport.activeTarget, []);
  const url = endpoint.url.replace(/\/1\.0\/events\?.*$/, `${operationPath(opId)}/websocket?secret=${encodeURIComponent(secret)}`);
  const path = `${operationPath(opId)}/websocket`;
  return new Promise((resolve, reject) => {
    const ws = new (webSocketClass())(url, { ...endpoint.options, handshakeTimeout: 10_000, perMessageDeflate: false });
    made(ws);
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => {
      ws.terminate();
      reject(
        new ApiError(res.statusCode === 403 ? 'API_FORBIDDEN' : 'API_ERROR', `GET ${path}: HTTP ${res.statusCode} instead of a websocket`, {
          method: 'GET',
          path,
          status: res.statusCode,
        }),
      );
    });
    ws.once('error', (err) => reject(new ApiError('NETWORK', `GET ${path}: ${err.message}`, { method: 'GET', path, cause: err })));
  });
}
