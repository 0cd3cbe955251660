import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocket, WebSocketServer } from 'ws';
import { refuseUpgrade } from '../envelope.js';

/** What an operation's websockets are checked against: the secret of each fd, and the sockets connected so far. */
export interface OperationSockets {
  /** fd name ("0", "1", "2", "control") → secret. */
  secrets: Record<string, string>;
  conns: Map<string, WebSocket>;
}

/**
 * Accepts one websocket of an operation (`GET /1.0/operations/<id>/websocket?secret=…`) as the
 * daemons do: an unknown operation is 404 `Operation not found`, a wrong secret 403 `permission
 * denied`, an fd connected already 500 `Websocket number already connected`; the socket accepted is
 * kept in `conns` under its fd, its errors ignored (a client gone is a close), and given to `opened`
 * with the operation's sockets.
 */
export function acceptOperationSocket<S extends OperationSockets>(
  wss: WebSocketServer,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  sockets: S | undefined,
  opened: (sockets: S, fd: string, ws: WebSocket) => void,
): void {
  if (!sockets) return refuseUpgrade(socket, 404, 'Operation not found');
  const secret = new URL(req.url ?? '/', 'http://sim').searchParams.get('secret') ?? '';
  const fd = Object.keys(sockets.secrets).find((k) => sockets.secrets[k] === secret);
  if (!fd) return refuseUpgrade(socket, 403, 'permission denied');
  if (sockets.conns.has(fd)) return refuseUpgrade(socket, 500, 'Websocket number already connected');
  wss.handleUpgrade(req, socket, head, (ws) => {
    sockets.conns.set(fd, ws);
    ws.on('error', () => undefined);
    opened(sockets, fd, ws);
  });
}
