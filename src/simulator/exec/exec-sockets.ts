import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { renderBody } from '../envelope.js';
import type { SimOperation } from '../operations.js';
import type { ShellResult } from './shell.js';

/** How long the daemon waits for the exec websockets before failing the operation (LXD: 5 s). */
const connectTimeoutMs = 5000;

/** One exec operation waiting for, then serving, its websockets. */
interface ExecSession {
  op: SimOperation;
  /** fd name ("0", "1", "2", "control") → secret. */
  secrets: Record<string, string>;
  interactive: boolean;
  conns: Map<string, WebSocket>;
  run: () => ShellResult;
  timer: NodeJS.Timeout;
  started: boolean;
  /** Ends a command that is still sleeping, killed by `signal` (from the control socket, or its close). */
  kill?: (signal: number) => void;
}

/**
 * The websockets of exec operations (`GET /1.0/operations/<id>/websocket?secret=…`), spoken as
 * LXD 5.0.2 speaks them: non-interactive sessions have fds 0 (stdin), 1 (stdout), 2 (stderr) and
 * a control socket; interactive ones fd 0 (the terminal) and control. The command runs once every
 * required socket is connected (control is optional for non-interactive sessions, a historical
 * allowance of the daemon); each output stream is binary messages ended by an empty text message,
 * then the control socket is closed, the operation gets `{"return": code}` and succeeds, and every
 * socket is closed. A command that sleeps ends early on a signal sent through the control socket
 * (`{"command":"signal","signal":9}`) or when the control socket closes (the daemon kills it
 * then), with code 128 + signal. A wrong secret is 403, an unknown operation 404.
 */
export class ExecSockets {
  private readonly sessions = new Map<string, ExecSession>();
  private readonly wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });

  /** Registers an exec operation whose command runs when its sockets are connected. */
  open(op: SimOperation, secrets: Record<string, string>, interactive: boolean, run: () => ShellResult): void {
    const session: ExecSession = { op, secrets, interactive, conns: new Map(), run, started: false, timer: undefined as unknown as NodeJS.Timeout };
    session.timer = setTimeout(() => {
      if (session.started) return;
      this.sessions.delete(op.id);
      for (const ws of session.conns.values()) ws.close();
      op.fail('Timed out waiting for websockets to connect');
    }, connectTimeoutMs).unref();
    this.sessions.set(op.id, session);
  }

  /** Handles the upgrade of `/1.0/operations/<id>/websocket`. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, opId: string): void {
    const session = this.sessions.get(opId);
    if (!session) return refuse(socket, 404, 'Operation not found');
    const secret = new URL(req.url ?? '/', 'http://sim').searchParams.get('secret') ?? '';
    const fd = Object.keys(session.secrets).find((k) => session.secrets[k] === secret);
    if (!fd) return refuse(socket, 403, 'permission denied');
    if (session.conns.has(fd)) return refuse(socket, 500, 'Websocket number already connected');
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      session.conns.set(fd, ws);
      // The built-in commands read no stdin; of the control messages only signals matter (no terminal to resize).
      ws.on('message', (data, isBinary) => {
        if (fd !== 'control' || isBinary) return;
        const msg = parseControl(String(data));
        if (msg?.command === 'signal' && typeof msg.signal === 'number') session.kill?.(msg.signal);
      });
      // As LXD: the control socket closed while the command runs kills it.
      if (fd === 'control') ws.once('close', () => session.kill?.(9));
      ws.on('error', () => undefined);
      const required = Object.keys(session.secrets).filter((k) => k !== 'control' || session.interactive);
      if (!session.started && required.every((k) => session.conns.has(k))) this.start(session);
    });
  }

  /** Closes every session socket. */
  close(): void {
    for (const s of this.sessions.values()) {
      clearTimeout(s.timer);
      for (const ws of s.conns.values()) ws.terminate();
    }
    this.sessions.clear();
    this.wss.close();
  }

  private start(session: ExecSession): void {
    session.started = true;
    clearTimeout(session.timer);
    const result = session.run();
    if (result.sleepMs <= 0) return this.finish(session, result);
    // A sleeping command: it ends when its time is up, or earlier on a signal that kills it
    // (the default action of every signal a client sends: 128 + n, as the daemon reports it).
    const timer = setTimeout(() => {
      session.kill = undefined;
      this.finish(session, result);
    }, result.sleepMs).unref();
    session.kill = (signal) => {
      if (signal <= 0 || signal === 17 || signal === 18 || signal === 28) return; // ignored: SIGCHLD, SIGCONT, SIGWINCH
      clearTimeout(timer);
      session.kill = undefined;
      const before = result.beforeSleep ?? { stdout: '', stderr: '' };
      this.finish(session, { ...before, code: 128 + signal, sleepMs: 0 });
    };
  }

  private finish(session: ExecSession, result: ShellResult): void {
    if (!this.sessions.has(session.op.id)) return;
    const send = (fd: string, text: string): void => {
      const ws = session.conns.get(fd);
      if (!ws || ws.readyState !== ws.OPEN) return;
      if (text !== '') ws.send(Buffer.from(text, 'utf8'), { binary: true });
      ws.send('', { binary: false });
    };
    if (session.interactive) {
      // A terminal: both streams on fd 0, with the line discipline's CR LF.
      send('0', (result.stdout + result.stderr).replace(/\n/g, '\r\n'));
    } else {
      send('1', result.stdout);
      send('2', result.stderr);
    }
    session.conns.get('control')?.close(1000);
    finishExec(session.op, result.code);
    this.sessions.delete(session.op.id);
    setTimeout(() => {
      for (const [fd, ws] of session.conns) if (fd !== 'control') ws.close(1000);
    }, 0).unref();
  }
}

function parseControl(text: string): { command?: unknown; signal?: unknown } | undefined {
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === 'object' ? (v as { command?: unknown; signal?: unknown }) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Ends an exec operation with `{"return": code}`: Success, except that 127 and 126 fail it with
 * "Command not found" / "Command not executable", as LXD 5.0.2 reports a shell's verdicts.
 */
export function finishExec(op: SimOperation, code: number): void {
  const err = code === 127 ? 'Command not found' : code === 126 ? 'Command not executable' : undefined;
  if (err) op.fail(err, { return: code });
  else op.succeed({ return: code });
}

function refuse(socket: Duplex, status: number, message: string): void {
  const body = renderBody({ kind: 'error', status, message });
  const reason = status === 403 ? 'Forbidden' : status === 404 ? 'Not Found' : 'Internal Server Error';
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
