import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { GuestConsole } from '../guest/guest-console.js';
import type { SimOperation } from '../operations.js';
import { LineDiscipline } from './line-discipline.js';
import { acceptOperationSocket } from './operation-socket.js';

/** One interactive console operation (`POST …/console`): its sockets, and the console it shows. */
interface ConsoleSession {
  op: SimOperation;
  /** fd name ("0", "control") → secret. */
  secrets: Record<string, string>;
  conns: Map<string, WebSocket>;
  console: GuestConsole;
  /** Ends the watch of the console once attached. */
  unwatch?: () => void;
  /** LXD's forkconsole is gone (a second attach, or the guest stopped): the client's next write or its leave fails the operation. */
  broken?: boolean;
  /** The daemon has dropped the sockets (the client left, or the operation failed). */
  dropped?: boolean;
}

/**
 * The interactive console's websockets (`GET /1.0/operations/<id>/websocket?secret=…` of a
 * `Showing console` operation), as LXD 5.0.2 and Incus 6.0.4 serve a busybox container's console
 * (recorded on both): once the control and data ("0") sockets are connected the console is
 * attached, and the data socket carries, as binary messages, what the console sends out from then
 * on (what the guest writes to `/dev/console`, and the echoes of what is typed) through the two ptys
 * between liblxc's console and the daemon, each of which turns a newline into CR LF (`\n` becomes
 * `\r\r\n` after the console's own `\r\n`); nothing of the ring before the attach is sent. What
 * arrives on the data socket is typed at the console: its pty's line discipline (n_tty's
 * defaults: canonical, echo, echoctl, icrnl, isig) echoes it, and the echo goes to the ring too.
 *
 * The operation waits for its sockets without a limit (neither daemon times it out). It ends in
 * Success when the control socket closes (the client detaches, `<ctrl>+a q`): LXD sends `\n\r`
 * (liblxc's console leaving its terminal) and drops the data socket without a close frame, Incus
 * drops it; liblxc writes `ESC c` into the console, which its echo puts in the ring as `^[c`. When the guest stops, the data socket gets its end (an empty text message; LXD `\r`
 * first) and the operation runs on until the control socket closes (LXD then fails it, as below).
 * One console is attached at a
 * time: on LXD a second attach fails at its connect (its data says forkconsole's error and ends;
 * the client's next write or its leave drops the sockets and fails the operation), on Incus the POST
 * is refused while an operation holds the console, unless it forces the holder off
 * ({@link holder}, {@link takeOver}).
 */
export class ConsoleSockets {
  private readonly sessions = new Map<string, ConsoleSession>();
  /** The session attached to each console (LXD), or holding it from its POST (Incus). */
  private readonly holders = new Map<GuestConsole, ConsoleSession>();
  /** Each console's line discipline while its guest runs: what is typed, kept across attaches. */
  private readonly disciplines = new WeakMap<GuestConsole, LineDiscipline>();
  private readonly wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });

  constructor(private readonly revision: 'earlier' | 'later') {}

  /** Registers a console operation; on the later revision (Incus) it holds the console from now on. */
  open(op: SimOperation, secrets: Record<string, string>, console: GuestConsole): void {
    const session: ConsoleSession = { op, secrets, conns: new Map(), console };
    this.sessions.set(op.id, session);
    if (this.revision === 'later') this.holders.set(console, session);
    void op.wait(-1).then(() => this.end(session));
  }

  /** Whether `opId` is a console operation's, whose websockets this serves. */
  has(opId: string): boolean {
    return this.sessions.has(opId);
  }

  /** The operation holding the console (Incus refuses another POST while there is one). */
  holder(console: GuestConsole): SimOperation | undefined {
    return this.holders.get(console)?.op;
  }

  /** Incus's `force`: the operation holding the console is cancelled and its sockets dropped. */
  takeOver(console: GuestConsole): void {
    this.holders.get(console)?.op.cancel();
  }

  /** Handles the upgrade of `/1.0/operations/<id>/websocket` for a console operation. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, opId: string): void {
    acceptOperationSocket(this.wss, req, socket, head, this.sessions.get(opId), (session, fd, ws) => {
      if (fd === '0')
        ws.on('message', (data, isBinary) => {
          if (session.broken) return this.fail(session);
          if (!isBinary || !session.unwatch) return;
          const discipline = this.discipline(session.console);
          discipline.input(Buffer.from(data as Buffer).toString('latin1'));
          // No program of the guest reads its console here: the lines typed go once echoed.
          discipline.dropLines();
        });
      // The client detaches by closing the control socket (a window-resize on it changes nothing here).
      else ws.once('close', () => this.detach(session));
      if (session.conns.size === 2) this.attach(session);
    });
  }

  /** Closes every console socket. */
  close(): void {
    for (const s of this.sessions.values()) for (const ws of s.conns.values()) ws.terminate();
    this.sessions.clear();
    this.holders.clear();
    this.wss.close();
  }

  private attach(session: ConsoleSession): void {
    const held = this.holders.get(session.console);
    if (held && held !== session) return this.refuse(session);
    this.holders.set(session.console, session);
    const data = session.conns.get('0')!;
    session.unwatch = session.console.watch({
      output: (bytes) => send(data, Buffer.from(bytes.toString('latin1').replace(/\n/g, '\r\r\n'), 'latin1')),
      stopped: () => {
        session.unwatch?.();
        session.unwatch = undefined;
        if (this.revision === 'earlier') {
          session.broken = true;
          send(data, Buffer.from('\r'));
        }
        endStream(data);
      },
    });
  }

  /**
   * LXD's second attach: liblxc's console is taken, so forkconsole says so and its data ends; the
   * operation runs on until the client writes or leaves, which fails it (the daemon writes to the
   * pty it closed).
   */
  private refuse(session: ConsoleSession): void {
    session.broken = true;
    const data = session.conns.get('0')!;
    send(data, Buffer.from('Error: Failed running forkconsole: "attaching to the container failed"\n'));
    send(data, Buffer.from('\r'));
    endStream(data);
  }

  private fail(session: ConsoleSession): void {
    if (session.op.done) return;
    session.dropped = true;
    dropAfter(session.conns.get('0'), Buffer.from('\n\r'));
    const control = session.conns.get('control');
    if (control?.readyState === control?.OPEN) control?.terminate();
    session.op.fail('write /dev/pts/ptmx: file already closed');
  }

  /** The control socket closed: the client left the console. */
  private detach(session: ConsoleSession): void {
    if (session.broken) return this.fail(session);
    if (session.op.done) return;
    session.dropped = true;
    const attached = session.unwatch !== undefined;
    session.unwatch?.();
    dropAfter(session.conns.get('0'), Buffer.from(attached && this.revision === 'earlier' ? '\n\r' : ''));
    // forkconsole leaves liblxc's console as it ends, resetting the terminal: `ESC c` goes into
    // the console, echoed `^[c` (on the daemons not always: a run kept `^[` alone, or nothing).
    if (attached) this.discipline(session.console).input('\x1bc');
    session.op.succeed();
  }

  /** The operation ended (detached, refused, cancelled): the console is free again. */
  private end(session: ConsoleSession): void {
    session.unwatch?.();
    // Cancelled (Incus's DELETE of the operation, or a forced attach): its sockets drop.
    if (!session.dropped) for (const ws of session.conns.values()) if (ws.readyState === ws.OPEN) ws.terminate();
    this.sessions.delete(session.op.id);
    if (this.holders.get(session.console) === session) this.holders.delete(session.console);
  }

  private discipline(console: GuestConsole): LineDiscipline {
    let discipline = this.disciplines.get(console);
    if (!discipline) {
      const created = new LineDiscipline(
        (text) => console.echo(Buffer.from(text, 'latin1')),
        () => undefined,
      );
      // The pty's column follows everything it sends out; a new run of the guest has a new pty.
      const unwatch = console.watch({
        output: (bytes) => created.wrote(bytes),
        stopped: () => {
          unwatch();
          this.disciplines.delete(console);
        },
      });
      this.disciplines.set(console, created);
      discipline = created;
    }
    return discipline;
  }
}

/**
 * Drops a socket as the daemons drop a console's data socket: without a close frame (the client
 * reads 1006), after the last bytes it sends have gone out (`terminate` alone would discard them).
 */
function dropAfter(ws: WebSocket | undefined, last: Buffer): void {
  if (!ws || ws.readyState !== ws.OPEN) return;
  if (last.length === 0) return ws.terminate();
  ws.send(last, { binary: true }, () => ws.terminate());
}

function send(ws: WebSocket, bytes: Buffer): void {
  if (bytes.length > 0 && ws.readyState === ws.OPEN) ws.send(bytes, { binary: true });
}

/** The end of the data stream: an empty text message, as both daemons send it. */
function endStream(ws: WebSocket): void {
  if (ws.readyState === ws.OPEN) ws.send('', { binary: false });
}
