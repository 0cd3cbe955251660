import { createServer, request, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket, { WebSocketServer } from 'ws';

/** Decides what reaches Reflex for each frame from the server: call `send` zero, one or more times, now or later. */
export type FrameHook = (raw: string, send: (raw: string) => void) => void;

/**
 * A unix-socket proxy in front of an instance server (the simulator or the real daemon) that
 * passes the REST API through untouched and lets a test tamper with the event stream of the
 * processes behind it only: reorder, duplicate, delay, inject malformed frames, cut the socket,
 * refuse reconnects, stop reading (slow consumer). Pings are forwarded so keepalive stays real.
 */
export interface EventProxy {
  socketPath: string;
  /** Replaces the frame hook (default: pass through). */
  setHook(hook: FrameHook | undefined): void;
  /** Sends a raw frame to every connected client. */
  inject(raw: string): void;
  /** Sends bytes as they are, as a binary message or (`binary: false`) as a text message whatever they hold (invalid UTF-8 included). */
  injectBytes(data: Buffer, binary: boolean): void;
  /** Cuts every event socket, both sides, without a close frame. */
  cut(): void;
  /** While on, event-socket upgrades are refused (the server looks down to the client). */
  refuse(on: boolean): void;
  /** Stops reading from the server side of every event socket (the server sees a slow consumer). */
  stall(): void;
  /** Reads again: what the server managed to send comes through, then the cut, if the server made one. */
  unstall(): void;
  /** Event sockets open now. */
  readonly connections: number;
  close(): Promise<void>;
}

export async function startEventProxy(upstreamSocket: string): Promise<EventProxy> {
  const dir = mkdtempSync(join(tmpdir(), 'reflex-proxy-'));
  const socketPath = join(dir, 'proxy.sock');
  const pairs = new Set<{ up: WebSocket; down: WebSocket }>();
  let hook: FrameHook | undefined;
  let refusing = false;
  const wss = new WebSocketServer({ noServer: true });

  const server: Server = createServer((req, res) => {
    const up = request({ socketPath: upstreamSocket, path: req.url, method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', (err) => {
      res.writeHead(502);
      res.end(err.message);
    });
    req.pipe(up);
  });

  server.on('upgrade', (req, socket, head) => {
    if (refusing) {
      socket.end('HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const up = new WebSocket(`ws+unix://${upstreamSocket}:${req.url}`);
    up.once('error', () => socket.destroy());
    up.once('unexpected-response', () => socket.destroy());
    up.once('open', () => {
      wss.handleUpgrade(req, socket, head, (down) => {
        const pair = { up, down };
        pairs.add(pair);
        const send = (raw: string) => {
          if (down.readyState === WebSocket.OPEN) down.send(raw);
        };
        up.on('message', (data) => {
          const raw = data.toString();
          if (hook) hook(raw, send);
          else send(raw);
        });
        up.on('ping', (d) => down.readyState === WebSocket.OPEN && down.ping(d));
        const end = () => {
          pairs.delete(pair);
          up.terminate();
          down.terminate();
        };
        up.on('close', end);
        down.on('close', end);
        up.on('error', end);
        down.on('error', end);
      });
    });
  });

  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  return {
    socketPath,
    setHook: (h) => (hook = h),
    inject: (raw) => {
      for (const p of pairs) if (p.down.readyState === WebSocket.OPEN) p.down.send(raw);
    },
    injectBytes: (data, binary) => {
      for (const p of pairs) if (p.down.readyState === WebSocket.OPEN) p.down.send(data, { binary });
    },
    cut: () => {
      for (const p of [...pairs]) {
        pairs.delete(p);
        p.up.terminate();
        p.down.terminate();
      }
    },
    refuse: (on) => (refusing = on),
    stall: () => {
      for (const p of pairs) (p.up as unknown as { _socket?: { pause(): void } })._socket?.pause();
    },
    unstall: () => {
      for (const p of pairs) (p.up as unknown as { _socket?: { resume(): void } })._socket?.resume();
    },
    get connections() {
      return pairs.size;
    },
    async close() {
      for (const p of [...pairs]) {
        p.up.terminate();
        p.down.terminate();
      }
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
