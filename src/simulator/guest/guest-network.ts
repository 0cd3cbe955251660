import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { StatusCode } from '../../client/status-code.js';
import { instanceKey, type InstanceObserver, type SimInstance } from '../instance-model.js';
import { HttpScripts, type HttpOutcome, type HttpScript } from './http-scripts.js';

/** Statuses whose guest accepts connections: running, or frozen (the kernel still accepts; nothing answers until the thaw). */
const accepting = new Set<StatusCode>([StatusCode.Running, StatusCode.Ready, StatusCode.Frozen, StatusCode.Freezing, StatusCode.Thawed]);
const answering = new Set<StatusCode>([StatusCode.Running, StatusCode.Ready]);

/** One guest whose address has been shown: its listeners (per port), open connections and requests held while frozen. */
interface Guest {
  inst: SimInstance;
  address: string;
  listeners: Map<number, Server>;
  sockets: Set<Socket>;
  held: (() => void)[];
}

/** A listen that failed (the address and port were taken by another process). */
export interface GuestListenError {
  address: string;
  port: number;
  error: string;
}

/**
 * The instances' network as a client on the same host sees it: each instance has a loopback
 * address of its own (127.A.B.C, shown in its state), and while it runs, an HTTP endpoint on every
 * guest port of that address, whose answers tests script (status, body, delay, hang, reset,
 * refused port), 200 "ok" when nothing is scripted. TCP checks connect to the same listeners.
 *
 * An instance listens from the moment its address is first shown (in its state, or asked by a
 * control): 10,000 instances nobody probes hold no socket. While it is stopped (or starting,
 * stopping, in Error) its ports are closed (connections refused); frozen, they accept and nothing
 * answers until it thaws; on an Offline cluster member, closed. One listener per instance and port (so a closed port refuses, which a
 * shared listener could not do), bound to the instance's address only; one HTTP parser for all,
 * which tells the instance by the connection's local address.
 */
export class GuestNetwork implements InstanceObserver {
  private readonly scripts = new HttpScripts();
  /** Listens that failed, newest last. */
  readonly listenErrors: GuestListenError[] = [];
  private readonly http: HttpServer;
  private readonly guests = new Map<SimInstance, Guest>();
  private readonly byAddress = new Map<string, Guest>();
  /** Requests received, per "project/name" then "port path". */
  private readonly requests = new Map<string, Map<string, number>>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private closed = false;

  private constructor(
    /** The guest ports every instance listens on. */
    readonly ports: readonly number[],
    /** Holds the chosen free port on 127.0.0.1 so no other process takes it on every address. */
    private readonly reservation: Server | undefined,
  ) {
    this.http = createHttpServer((req, res) => this.answer(req, res));
  }

  /** Opens the guest network on `ports`, or on one free port chosen now when none is given. */
  static async open(ports: readonly number[] | undefined): Promise<GuestNetwork> {
    if (ports && ports.length > 0) return new GuestNetwork([...new Set(ports)], undefined);
    const reservation = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve, reject) => {
      reservation.once('error', reject);
      reservation.listen({ host: '127.0.0.1', port: 0, exclusive: true }, resolve);
    });
    reservation.unref();
    return new GuestNetwork([(reservation.address() as { port: number }).port], reservation);
  }

  /** The instance's address was shown: from now on it listens while it runs. */
  addressShown(inst: SimInstance): void {
    if (this.closed || this.guests.has(inst) || !inst.guestAddress) return;
    const guest: Guest = { inst, address: inst.guestAddress, listeners: new Map(), sockets: new Set(), held: [] };
    this.guests.set(inst, guest);
    this.byAddress.set(guest.address, guest);
    this.reconcile(guest);
  }

  /** After any change of the instance: opens or closes its ports as its status and the scripts say. */
  changed(inst: SimInstance): void {
    const guest = this.guests.get(inst);
    if (guest) this.reconcile(guest);
  }

  /** The instance is gone: its ports close for good. */
  removed(inst: SimInstance): void {
    const guest = this.guests.get(inst);
    if (!guest) return;
    this.shut(guest);
    this.guests.delete(inst);
    this.byAddress.delete(guest.address);
  }

  /** Registers an HTTP script (see HttpScripts.define) and applies it at once: it may close or open ports. */
  script(script: HttpScript): void {
    this.scripts.define(script);
    this.rescript();
  }

  /** Forgets every HTTP script: every running instance answers 200 "ok" on every port again. */
  clearScripts(): void {
    this.scripts.clear();
    this.rescript();
  }

  private rescript(): void {
    for (const guest of this.guests.values()) this.reconcile(guest);
  }

  /** Every HTTP script with its calls per instance. */
  scriptList(): ReturnType<HttpScripts['list']> {
    return this.scripts.list();
  }

  /** Requests an instance's endpoint received (every path and port, or one). */
  calls(key: string, opts: { path?: string; port?: number } = {}): number {
    let n = 0;
    for (const [where, count] of this.requests.get(key) ?? []) {
      const [port, path] = [Number(where.slice(0, where.indexOf(' '))), where.slice(where.indexOf(' ') + 1)];
      if ((opts.port === undefined || opts.port === port) && (opts.path === undefined || opts.path === path)) n += count;
    }
    return n;
  }

  /** Closes every listener and connection. */
  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const guest of this.guests.values()) this.shut(guest);
    this.guests.clear();
    this.byAddress.clear();
    this.http.close();
    if (this.reservation) await new Promise<void>((resolve) => this.reservation!.close(() => resolve()));
  }

  private reconcile(guest: Guest): void {
    const { inst } = guest;
    if (this.guests.get(inst) !== guest) return;
    const key = instanceKey(inst.project, inst.name);
    // A guest on an Offline member is out of reach, as its host is.
    const up = !this.closed && !inst.memberOffline && accepting.has(inst.statusCode);
    for (const port of this.ports) {
      const want = up && !this.scripts.refuses(key, port);
      const has = guest.listeners.get(port);
      if (want && !has) this.listen(guest, port);
      else if (!want && has) this.closePort(guest, port);
    }
    if (!up) guest.held.length = 0;
    else if (answering.has(inst.statusCode)) for (const go of guest.held.splice(0)) go();
  }

  private listen(guest: Guest, port: number): void {
    const server = createServer((socket) => {
      guest.sockets.add(socket);
      socket.once('close', () => guest.sockets.delete(socket));
      this.http.emit('connection', socket);
    });
    guest.listeners.set(port, server);
    server.once('error', (err) => {
      if (guest.listeners.get(port) === server) guest.listeners.delete(port);
      this.listenErrors.push({ address: guest.address, port, error: err.message });
      process.emitWarning(`the simulator's guest ${guest.inst.name} cannot listen on ${guest.address}:${port}: ${err.message}`, {
        code: 'REFLEX_SIM_GUEST_LISTEN',
      });
    });
    server.listen({ host: guest.address, port, exclusive: true });
    server.unref();
  }

  private closePort(guest: Guest, port: number): void {
    const server = guest.listeners.get(port)!;
    guest.listeners.delete(port);
    // A listen still under way completes first, then closes: closing before it would leave it bound.
    if (server.listening) server.close();
    else server.once('listening', () => server.close());
    for (const socket of guest.sockets) if (socket.localPort === port) socket.destroy();
  }

  private shut(guest: Guest): void {
    for (const port of [...guest.listeners.keys()]) this.closePort(guest, port);
    for (const socket of guest.sockets) socket.destroy();
    guest.held.length = 0;
  }

  private answer(req: IncomingMessage, res: ServerResponse): void {
    const guest = this.byAddress.get(req.socket.localAddress ?? '');
    const port = req.socket.localPort ?? 0;
    if (!guest || guest.inst.memberOffline || !accepting.has(guest.inst.statusCode)) {
      req.socket.destroy();
      return;
    }
    const go = () => this.respond(guest, port, req, res);
    if (answering.has(guest.inst.statusCode)) go();
    else guest.held.push(go);
  }

  private respond(guest: Guest, port: number, req: IncomingMessage, res: ServerResponse): void {
    const key = instanceKey(guest.inst.project, guest.inst.name);
    const path = new URL(req.url ?? '/', 'http://guest').pathname;
    let counts = this.requests.get(key);
    if (!counts) this.requests.set(key, (counts = new Map()));
    counts.set(`${port} ${path}`, (counts.get(`${port} ${path}`) ?? 0) + 1);
    const outcome: HttpOutcome = this.scripts.take(key, port, path) ?? { status: 200, body: 'ok' };
    // This request may have moved the script on to a refused port: it closes once this answer is out.
    res.once('close', () => this.reconcile(guest));
    if (outcome.reset || outcome.refuse) {
      req.socket.resetAndDestroy();
      return;
    }
    if (outcome.hang) return;
    const send = () => {
      if (res.destroyed) return;
      res.writeHead(outcome.status ?? 200, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(outcome.body ?? '');
    };
    if (!outcome.delayMs) return send();
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      send();
    }, outcome.delayMs);
    timer.unref();
    this.timers.add(timer);
  }
}
