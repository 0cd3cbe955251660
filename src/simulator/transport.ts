import { X509Certificate, createHash } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { dirname } from 'node:path';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { ReflexError } from '../errors/reflex-error.js';
import type { RequestInfo, SimContext } from './context.js';
import { unixRequestor } from './lifecycle.js';

/** One address to listen on. */
export type ListenSpec = { kind: 'unix'; path: string } | { kind: 'https'; host: string; port: number };

/** Parses `unix:/path` or `https://host:port`. */
export function parseListen(spec: string): ListenSpec {
  if (spec.startsWith('unix:')) {
    const path = spec.slice('unix:'.length).replace(/^\/\/(?=\/)/, '');
    if (!path) throw new Error(`listen address ${spec} has no socket path`);
    return { kind: 'unix', path };
  }
  const m = /^https:\/\/(\[[^\]]+\]|[^:/]+):(\d+)\/?$/.exec(spec);
  if (m) return { kind: 'https', host: m[1]!.replace(/^\[|\]$/g, ''), port: Number(m[2]) };
  throw new Error(`listen address ${spec} is neither unix:/path nor https://host:port`);
}

/** What the transport hands to the application for every request and upgrade. */
export interface TransportHandlers {
  request(req: IncomingMessage, res: ServerResponse, identity: Identity): void;
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, identity: Identity): void;
}

/** Who is calling, before the trust store is consulted. */
export type Identity = Pick<RequestInfo, 'requestor' | 'fingerprint' | 'clientCertPem'> & { transport: 'unix' | 'tls' };

/**
 * The listening sockets: node:http on a unix socket, node:https (client certificates requested,
 * not required) on TCP. Survives a simulated daemon restart by closing and re-binding the same
 * addresses.
 */
export class Transport {
  private servers: { spec: ListenSpec; server: Server }[] = [];
  /** Resolved addresses after listen(): socket path and/or https URL. */
  socketPath: string | undefined;
  httpsUrl: string | undefined;

  constructor(
    private readonly specs: ListenSpec[],
    private readonly handlers: TransportHandlers,
    private readonly tls: { cert: string; key: string } | undefined,
  ) {}

  /**
   * Binds every address. When one fails, the ones already bound are closed before the error
   * (SIM_LISTEN_FAILED, naming the address) propagates, so a caller that exits leaves nothing behind.
   */
  async listen(): Promise<void> {
    try {
      for (const spec of this.specs) await this.listenOn(spec);
    } catch (err) {
      await this.close();
      throw err;
    }
  }

  private async listenOn(spec: ListenSpec): Promise<void> {
    const server =
      spec.kind === 'unix'
        ? createServer()
        : createHttpsServer({ cert: this.tls!.cert, key: this.tls!.key, requestCert: true, rejectUnauthorized: false });
    server.keepAliveTimeout = 30_000;
    server.on('request', (req, res) => this.handlers.request(req, res, identityOf(req.socket, spec)));
    server.on('upgrade', (req, socket, head) => {
      // A client gone before the answer (a late exec socket it gave up on): its EPIPE or reset is
      // that connection's end, never the simulator's (ws takes the socket over when it upgrades).
      socket.on('error', () => socket.destroy());
      this.handlers.upgrade(req, socket, head, identityOf(req.socket, spec));
    });
    server.on('clientError', (_err, socket) => socket.destroy());
    try {
      await bind(server, spec);
    } catch (err) {
      throw listenError(err as NodeJS.ErrnoException, spec);
    }
    if (spec.kind === 'unix') this.socketPath = spec.path;
    else {
      const addr = server.address();
      if (addr && typeof addr === 'object') spec.port = addr.port;
      this.httpsUrl = `https://${spec.host.includes(':') ? `[${spec.host}]` : spec.host}:${spec.port}`;
    }
    this.servers.push({ spec, server });
  }

  /** Closes every server and cuts every open connection. */
  async close(): Promise<void> {
    const closing = this.servers.map(
      ({ spec, server }) =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
          if (spec.kind === 'unix') rmSync(spec.path, { force: true });
        }),
    );
    this.servers = [];
    await Promise.all(closing);
  }
}

function listenError(err: NodeJS.ErrnoException, spec: ListenSpec): ReflexError {
  const address = spec.kind === 'unix' ? `unix:${spec.path}` : `https://${spec.host}:${spec.port}`;
  const why =
    err.code === 'EADDRINUSE'
      ? 'the address is in use'
      : err.code === 'EADDRNOTAVAIL'
        ? 'the address is not on this host'
        : err.code === 'EACCES'
          ? 'permission denied'
          : (err.code ?? err.message);
  return new ReflexError('SIM_LISTEN_FAILED', `reflex sim cannot listen on ${address}: ${why}`, { cause: err });
}

async function bind(server: Server, spec: ListenSpec): Promise<void> {
  if (spec.kind === 'unix') {
    mkdirSync(dirname(spec.path), { recursive: true });
    rmSync(spec.path, { force: true });
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    const done = (): void => {
      server.off('error', reject);
      resolve();
    };
    if (spec.kind === 'unix') server.listen(spec.path, done);
    else server.listen(spec.port, spec.host, done);
  });
}

const identityCache = new WeakMap<object, Identity>();

function identityOf(socket: object, spec: ListenSpec): Identity {
  let id = identityCache.get(socket);
  if (id) return id;
  if (spec.kind === 'unix') {
    id = { transport: 'unix', requestor: unixRequestor, fingerprint: undefined, clientCertPem: undefined };
  } else {
    const tlsSocket = socket as TLSSocket;
    const peer = tlsSocket.getPeerCertificate?.();
    const raw = peer && 'raw' in peer ? peer.raw : undefined;
    const fingerprint = raw ? createHash('sha256').update(raw).digest('hex') : undefined;
    const clientCertPem = raw ? new X509Certificate(raw).toString() : undefined;
    id = {
      transport: 'tls',
      requestor: { username: fingerprint ?? '', protocol: 'tls', address: `${tlsSocket.remoteAddress}:${tlsSocket.remotePort}` },
      fingerprint,
      clientCertPem,
    };
  }
  identityCache.set(socket, id);
  return id;
}

/** Builds RequestInfo from an identity, the trust store and the query string. */
export function requestInfo(ctx: SimContext, identity: Identity, query: URLSearchParams): RequestInfo {
  return {
    requestor: identity.requestor,
    fingerprint: identity.fingerprint,
    clientCertPem: identity.clientCertPem,
    trusted: identity.transport === 'unix' || ctx.trust.has(identity.fingerprint),
    project: query.get('project') || 'default',
    allProjects: query.get('all-projects') === 'true',
    query,
  };
}
