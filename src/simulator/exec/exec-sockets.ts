import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { harmlessSignals } from '../guest/guest-commands.js';
import type { TerminalSize } from '../guest/busybox-tty.js';
import type { GuestResult } from '../guest/guests.js';
import type { StdinPipe } from '../guest/script-feed.js';
import type { SimOperation } from '../operations.js';
import { terminalBytes } from './line-discipline.js';
import { acceptOperationSocket } from './operation-socket.js';
import { patientTimeout } from './patient-timeout.js';
import type { TerminalSession } from './terminal-session.js';

/** How long the daemon waits for the exec websockets before failing the operation (LXD: 5 s; a stall of the simulator's process does not count). */
const connectTimeoutMs = 5000;

/**
 * How long a command waits for the first byte or the end of its stdin before it runs with nothing:
 * the simulated programs take their input whole, and a client may never close stdin. Counted by
 * {@link patientTimeout}: time the simulator's process was stalled does not count.
 */
const stdinGraceMs = 1000;

/**
 * Once stdin has brought data, how long a silence makes the command run with what arrived (a client
 * that sends and never closes): a script fed line by line (`(echo 'echo a'; sleep 2; echo 'exit 3')
 * | lxc exec c -- sh`) ends its stdin itself, so every line it sends reaches the shell.
 */
const stdinIdleMs = 10_000;

/**
 * Runs the command of a session with its stdin; aborting `signal` (reason: a signal number) kills
 * it; `signals` brings each other signal the client sends it (a `signal` event, the number as its
 * `detail`), which the command's shell may trap.
 */
export type ExecRunner = (io: {
  stdin: Buffer;
  signal: AbortSignal;
  signals: EventTarget;
  /** A shell reading its script from stdin: stdin as it arrives, and where the shell's output goes as it is written. */
  stdinPipe?: StdinPipe;
  output?: (part: Omit<GuestResult, 'code'>) => void;
}) => Promise<GuestResult>;

/**
 * Starts an interactive exec's terminal session (terminal-session.ts) once its sockets are
 * connected: `write` sends bytes to the terminal, `end` ends the exec with a code, `signal` is
 * aborted when it is killed, and `signals` has the signals sent to its program (the control
 * socket's, when the session's program takes them: {@link TerminalSession.takesSignals}).
 */
export type TerminalStarter = (io: {
  write: (bytes: Buffer) => void;
  end: (code: number) => void;
  signal: AbortSignal;
  signals: EventTarget;
}) => TerminalSession;

/** One exec operation waiting for, then serving, its websockets. */
interface ExecSession {
  op: SimOperation;
  /** fd name ("0", "1", "2", "control") → secret. */
  secrets: Record<string, string>;
  interactive: boolean;
  conns: Map<string, WebSocket>;
  run: ExecRunner;
  timer: { cancel(): void };
  started: boolean;
  /** What arrived on fd 0, and whether it ended (an empty text message, or the socket closed). */
  stdin: Buffer[];
  stdinEnded: boolean;
  /** Aborted with the signal number that kills the command (SIGKILL from the control socket, or its close). */
  killer: AbortController;
  /** The other signals sent to a running non-interactive command, which it may trap or ignore. */
  signals: EventTarget;
  /** Whether the non-interactive command is running and takes {@link signals}. */
  running: boolean;
  /** Runs the command once stdin ended, if it waits for that. */
  onStdinEnd?: () => void;
  /** Takes a chunk of stdin: kept for the run, which it puts off while data keeps coming, or handed to a shell reading it as it comes. */
  onStdinData?: (bytes: Buffer) => void;
  /** A shell that reads its script from stdin as it comes (`sh` alone, without a terminal): it starts at once. */
  readsScript: boolean;
  /** An interactive exec: a terminal session instead of one run. */
  terminal?: TerminalStarter;
  shell?: TerminalSession;
  /** An interactive session's pty size, which window-resize messages change. */
  terminalSize?: TerminalSize;
}

/**
 * The websockets of exec operations (`GET /1.0/operations/<id>/websocket?secret=…`), spoken as
 * LXD 5.0.2 speaks them: non-interactive sessions have fds 0 (stdin), 1 (stdout), 2 (stderr) and
 * a control socket; interactive ones fd 0 (the terminal) and control. The command runs once every
 * required socket is connected (control is optional for non-interactive sessions, a historical
 * allowance of the daemon); each output stream is binary messages ended by an empty text message,
 * then the control socket is closed, the operation gets `{"return": code}` and succeeds, and every
 * socket is closed. Stdin (fd 0, non-interactive) is read to its end first (without any data, at
 * most {@link stdinGraceMs} after the sockets connected; once data came, until {@link stdinIdleMs}
 * of silence). A running command ends early on a signal
 * sent through the control socket (`{"command":"signal","signal":9}`) or when the control socket
 * closes (the daemon kills it then), with code 128 + signal; an interactive session's pty is
 * resized by `window-resize` messages. The sockets are accepted as every operation's are
 * ({@link acceptOperationSocket}: a wrong secret 403, an unknown operation 404).
 */
export class ExecSockets {
  private readonly sessions = new Map<string, ExecSession>();
  private readonly wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });

  /**
   * Registers an exec operation whose command runs when its sockets are connected; an interactive
   * one runs on a pty of `terminalSize` (changed in place by the client's window-resize messages).
   */
  open(
    op: SimOperation,
    secrets: Record<string, string>,
    interactive: boolean,
    run: ExecRunner,
    terminal?: TerminalStarter,
    terminalSize?: TerminalSize,
    readsScript = false,
  ): void {
    const session: ExecSession = {
      op,
      secrets,
      interactive,
      terminal: interactive ? terminal : undefined,
      terminalSize: interactive ? terminalSize : undefined,
      conns: new Map(),
      run,
      started: false,
      timer: { cancel: () => undefined },
      stdin: [],
      stdinEnded: interactive,
      killer: new AbortController(),
      signals: new EventTarget(),
      running: false,
      readsScript: readsScript && !interactive,
    };
    session.timer = patientTimeout(connectTimeoutMs, () => {
      if (session.started) return;
      this.sessions.delete(op.id);
      for (const ws of session.conns.values()) ws.close();
      op.fail('Timed out waiting for websockets to connect');
    });
    this.sessions.set(op.id, session);
  }

  /** Handles the upgrade of `/1.0/operations/<id>/websocket`. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, opId: string): void {
    acceptOperationSocket(this.wss, req, socket, head, this.sessions.get(opId), (session, fd, ws) => {
      ws.on('message', (data, isBinary) => {
        if (fd === '0' && !session.interactive) {
          if (isBinary) {
            const bytes = Buffer.from(data as Buffer);
            if (session.onStdinData) session.onStdinData(bytes);
            else session.stdin.push(bytes);
          } else endStdin(session);
          return;
        }
        if (fd === '0' && session.shell) {
          if (isBinary) session.shell.input(Buffer.from(data as Buffer));
          return;
        }
        if (fd !== 'control' || isBinary) return;
        const msg = parseControl(String(data));
        if (msg?.command === 'signal' && typeof msg.signal === 'number') kill(session, msg.signal);
        if (msg?.command === 'window-resize') resize(session, msg.args);
      });
      if (fd === '0') ws.once('close', () => endStdin(session));
      // As LXD: the control socket closed while the command runs kills it.
      if (fd === 'control') ws.once('close', () => kill(session, 9));
      const required = Object.keys(session.secrets).filter((k) => k !== 'control' || session.interactive);
      if (!session.started && required.every((k) => session.conns.has(k))) this.start(session);
    });
  }

  /**
   * Each running interactive exec (its operation's id) and whether it waits for its terminal
   * (`reads`): a shell at its prompt or a program in a read of it (or the shell is over). A driver
   * that types to it asks before a key whose effect depends on what was read, as it asks a real
   * host's /proc whether the processes sleep (test/lxc-client/pty-exec.py's `@reads`).
   */
  terminals(): { operation: string; reads: boolean }[] {
    return [...this.sessions.values()]
      .filter((s) => s.interactive && s.started)
      .map((s) => ({ operation: s.op.id, reads: s.shell?.readsTerminal() === true }));
  }

  /** Closes every session socket. */
  close(): void {
    for (const s of this.sessions.values()) {
      s.timer.cancel();
      s.killer.abort(9);
      for (const ws of s.conns.values()) ws.terminate();
    }
    this.sessions.clear();
    this.wss.close();
  }

  private start(session: ExecSession): void {
    session.started = true;
    session.timer.cancel();
    if (session.terminal) {
      const end = (code: number): void => this.finish(session, { stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), code });
      session.shell = session.terminal({
        write: (bytes) => {
          const ws = session.conns.get('0');
          if (ws?.readyState === ws?.OPEN) ws?.send(bytes, { binary: true });
        },
        end,
        signal: session.killer.signal,
        signals: session.signals,
      });
      // A program other than a bare shell takes the control socket's signals as it would without a terminal (its traps).
      session.running = session.shell.takesSignals;
      // A signal through the control socket (or its close) ends the shell as it would end ash.
      session.killer.signal.addEventListener('abort', () => end(128 + (Number(session.killer.signal.reason) || 9)), { once: true });
      return;
    }
    if (session.readsScript && !session.stdinEnded && !session.killer.signal.aborted) return this.startReadingScript(session);
    let grace: { cancel(): void } | undefined;
    const run = (): void => {
      session.onStdinEnd = undefined;
      session.onStdinData = undefined;
      grace?.cancel();
      session.running = true;
      session
        .run({ stdin: Buffer.concat(session.stdin), signal: session.killer.signal, signals: session.signals })
        .then((result) => this.finish(session, result))
        .catch((err: unknown) => this.failRun(session, err));
    };
    if (session.stdinEnded || session.killer.signal.aborted) return run();
    session.onStdinEnd = run;
    session.onStdinData = (bytes) => {
      session.stdin.push(bytes);
      grace?.cancel();
      grace = patientTimeout(stdinIdleMs, run);
    };
    grace = patientTimeout(session.stdin.length > 0 ? stdinIdleMs : stdinGraceMs, run);
  }

  /**
   * A shell reading its script from stdin runs at once and is given stdin as it comes, each output
   * stream sent as the shell writes it. Stdin ends as for any command: its end, or
   * {@link stdinGraceMs} without data, or {@link stdinIdleMs} of silence after data (a client that
   * never closes it), or the command's kill.
   */
  private startReadingScript(session: ExecSession): void {
    const pipe = new ArrivingStdin(session.stdin);
    let grace: { cancel(): void } | undefined;
    const end = (): void => {
      grace?.cancel();
      session.onStdinEnd = undefined;
      session.onStdinData = undefined;
      pipe.end();
    };
    session.onStdinEnd = end;
    session.onStdinData = (bytes) => {
      grace?.cancel();
      grace = patientTimeout(stdinIdleMs, end);
      pipe.push(bytes);
    };
    grace = patientTimeout(session.stdin.length > 0 ? stdinIdleMs : stdinGraceMs, end);
    session.killer.signal.addEventListener('abort', end, { once: true });
    const output = (part: { stdout: Buffer; stderr: Buffer }): void => {
      for (const [fd, bytes] of [['1', part.stdout] as const, ['2', part.stderr] as const]) {
        const ws = session.conns.get(fd);
        if (bytes.length > 0 && ws?.readyState === ws?.OPEN) ws?.send(bytes, { binary: true });
      }
    };
    session.running = true;
    session
      .run({ stdin: Buffer.alloc(0), signal: session.killer.signal, signals: session.signals, stdinPipe: pipe, output })
      .finally(end)
      .then((result) => this.finish(session, result))
      .catch((err: unknown) => this.failRun(session, err));
  }

  /** The guest could not run the command: the operation fails with why, and its sockets close. */
  private failRun(session: ExecSession, err: unknown): void {
    this.sessions.delete(session.op.id);
    session.op.fail((err as Error).message ?? String(err));
    for (const ws of session.conns.values()) ws.close(1000);
  }

  private finish(session: ExecSession, result: GuestResult): void {
    session.running = false;
    if (!this.sessions.has(session.op.id)) return;
    const send = (fd: string, bytes: Buffer): void => {
      const ws = session.conns.get(fd);
      if (!ws || ws.readyState !== ws.OPEN) return;
      if (bytes.length > 0) ws.send(bytes, { binary: true });
      ws.send('', { binary: false });
    };
    if (session.interactive) {
      // A terminal: both streams on fd 0 in the order written, with the line discipline's CR LF.
      send('0', terminalBytes(result));
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

/** An exec's stdin as it arrives, for a shell that reads its script from it ({@link StdinPipe}). */
class ArrivingStdin implements StdinPipe {
  private take?: (bytes: Buffer) => void;
  private onEnd?: () => void;
  private ended = false;

  /** @param arrived What came before the shell started. */
  constructor(private readonly arrived: Buffer[]) {}

  attach(take: (bytes: Buffer) => void, end: () => void): void {
    for (const bytes of this.arrived) take(bytes);
    this.take = take;
    this.onEnd = end;
    if (this.ended) end();
  }

  push(bytes: Buffer): void {
    if (this.ended) return;
    if (this.take) this.take(bytes);
    else this.arrived.push(bytes);
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.onEnd?.();
  }
}

function endStdin(session: ExecSession): void {
  if (session.stdinEnded) return;
  session.stdinEnded = true;
  session.onStdinEnd?.();
}

/**
 * Sends the command a signal, as LXD forwards it to the command's process: a running
 * non-interactive command's shell takes any but SIGKILL itself (its trap, or its default action);
 * otherwise signals whose default action is not to end a process do nothing, and the others kill it.
 */
function kill(session: ExecSession, signal: number): void {
  if (signal <= 0 || session.killer.signal.aborted) return;
  if (session.running && signal !== 9) {
    session.signals.dispatchEvent(new CustomEvent('signal', { detail: signal }));
    return;
  }
  if (harmlessSignals.has(signal)) return;
  session.killer.abort(signal);
  // A command still waiting for its stdin runs at once, to be killed.
  session.onStdinEnd?.();
}

/**
 * A window-resize control message (`{"command":"window-resize","args":{"width":"80","height":"24"}}`,
 * the numbers as strings, as the clients send them) resizes an interactive session's pty; one
 * whose numbers do not parse is ignored, as LXD ignores it.
 */
function resize(session: ExecSession, args: unknown): void {
  const size = session.terminalSize;
  if (!size || !args || typeof args !== 'object') return;
  const { width, height } = args as Record<string, unknown>;
  const number = (v: unknown): number | undefined => (typeof v === 'string' && /^\d{1,5}$/.test(v) ? Number(v) : undefined);
  const cols = number(width);
  const rows = number(height);
  if (cols === undefined || rows === undefined) return;
  if (session.shell) session.shell.resize(cols, rows);
  else Object.assign(size, { cols, rows });
}

function parseControl(text: string): { command?: unknown; signal?: unknown; args?: unknown } | undefined {
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === 'object' ? (v as { command?: unknown; signal?: unknown; args?: unknown }) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Ends an exec operation with `{"return": code}`: Success, except that 127 and 126 fail it with
 * "Command not found" / "Command not executable", as LXD 5.0.2 reports a shell's verdicts.
 */
export function finishExec(op: SimOperation, code: number, metadata: Record<string, unknown> = {}): void {
  const err = code === 127 ? 'Command not found' : code === 126 ? 'Command not executable' : undefined;
  if (err) op.fail(err, { ...metadata, return: code });
  else op.succeed({ ...metadata, return: code });
}
