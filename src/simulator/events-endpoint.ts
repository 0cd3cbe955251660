import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { SimContext } from './context.js';
import { refuseUpgrade } from './envelope.js';
import { allEventTypes, type SimEventType } from './event-hub.js';
import { requestInfo, type Identity } from './transport.js';

/**
 * GET /1.0/events upgrades to a WebSocket. Errors before the upgrade come back as HTTP 500 JSON,
 * even when they mean 400 (LXD 5.0.2, notes §1); an untrusted HTTPS client gets 403.
 */
export class EventsEndpoint {
  private readonly wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });

  constructor(private readonly ctx: SimContext) {}

  /** Handles an upgrade request on any path (non-event paths are refused). */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, identity: Identity): void {
    const url = new URL(req.url ?? '/', 'http://sim');
    if (url.pathname !== '/1.0/events' || this.ctx.restarting) return refuseUpgrade(socket, 404, 'not found');
    const info = requestInfo(this.ctx, identity, url.searchParams);
    if (!info.trusted) return refuseUpgrade(socket, 403, 'not authorized');
    const wanted = url.searchParams.get('type');
    const types = new Set<SimEventType>();
    for (const raw of (wanted ?? allEventTypes.join(',')).split(',')) {
      const t = raw.trim();
      if (t === '') continue;
      // "operations" is the seed's spelling; LXD's is "operation". Both are accepted.
      const type = t === 'operations' ? 'operation' : t;
      if (!allEventTypes.includes(type as SimEventType)) return refuseUpgrade(socket, 500, `'${t}' isn't a supported event type`);
      types.add(type as SimEventType);
    }
    const projectParam = url.searchParams.get('project');
    if (info.allProjects && projectParam) return refuseUpgrade(socket, 500, 'Cannot specify a project when requesting all projects');
    if (!info.allProjects && !this.ctx.store.projects.includes(info.project)) return refuseUpgrade(socket, 500, 'Project not found');
    this.wss.handleUpgrade(req, socket, head, (ws) => this.ctx.hub.add(ws, { types, project: info.allProjects ? null : info.project }));
  }

  /** Closes the WebSocket server. */
  close(): void {
    this.wss.close();
  }
}
