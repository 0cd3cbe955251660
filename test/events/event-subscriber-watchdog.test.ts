import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { EventSubscriber } from '../../src/events/event-subscriber.js';
import { until } from '../support/wait.js';

/**
 * The subscriber's silence watchdog: a socket that hears nothing (no frame, no ping) for
 * silenceTimeoutMs is replaced; a stall of Reflex's own event loop is not the daemon's silence.
 */
describe('the event socket silence watchdog', () => {
  let server: WebSocketServer | undefined;
  let sub: EventSubscriber | undefined;
  afterEach(async () => {
    sub?.stop();
    sub = undefined;
    for (const c of server?.clients ?? []) c.terminate();
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });

  /** A bare events endpoint; `onSocket` runs for each connection. */
  async function events(onSocket: (ws: WebSocket) => void): Promise<{ connections: () => number; url: string }> {
    server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await once(server, 'listening');
    let n = 0;
    server.on('connection', (ws) => {
      n++;
      onSocket(ws);
    });
    return { connections: () => n, url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/1.0/events` };
  }

  function subscribe(url: string): EventSubscriber {
    sub = new EventSubscriber({
      endpoint: () => ({ url, options: {} }),
      onFrame: () => undefined,
      logger: pino({ level: 'silent' }),
      silenceTimeoutMs: 300,
      initialBackoffMs: 10,
    });
    sub.start();
    return sub;
  }

  it('replaces a socket that hears neither a frame nor a ping for silenceTimeoutMs', async () => {
    const daemon = await events(() => undefined);
    subscribe(daemon.url);
    await until('a second connection after the first went silent', () => daemon.connections() >= 2, 10_000);
  });

  it("does not take a stall of its own event loop for the daemon's silence", async () => {
    let pongs = 0;
    const daemon = await events((ws) => {
      ws.on('pong', () => pongs++);
      const pinger = setInterval(() => ws.ping('keepalive'), 50);
      ws.on('close', () => clearInterval(pinger));
    });
    const s = subscribe(daemon.url);
    await until('connected and answering pings', () => s.connected && pongs >= 2, 10_000);
    // A long synchronous step in this process (a 50 MB frame parsed on a starved CPU): the daemon's
    // pings wait unread in the socket meanwhile.
    const blockedUntil = Date.now() + 1000;
    while (Date.now() < blockedUntil);
    const after = pongs;
    await until('pings answered again after the stall', () => pongs >= after + 5, 10_000);
    expect(daemon.connections(), 'the socket was kept').toBe(1);
  });
});
