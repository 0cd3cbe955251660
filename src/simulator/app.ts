import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SimContext } from './context.js';
import type { SimulatorControls } from './controls.js';
import { httpStatusOf, renderBody, SimHttpError, type SimResponse } from './envelope.js';
import { registerCertificates } from './handlers/certificates.js';
import { registerCluster } from './handlers/cluster.js';
import { registerControl } from './handlers/control.js';
import { registerFiles } from './handlers/files.js';
import { registerHost } from './handlers/host.js';
import { registerImages } from './handlers/images.js';
import { registerConsole } from './handlers/console.js';
import { registerInstanceLogs } from './handlers/instance-logs.js';
import { registerInstanceState } from './handlers/instance-state.js';
import { registerInstances } from './handlers/instances.js';
import { registerNetworks } from './handlers/networks.js';
import { registerOperations } from './handlers/operations.js';
import { registerProfiles } from './handlers/profiles.js';
import { registerProjects } from './handlers/projects.js';
import { registerServer } from './handlers/server.js';
import { registerSnapshots } from './handlers/snapshots.js';
import { registerStorage } from './handlers/storage.js';
import { Router } from './router.js';
import { requestInfo, type Identity } from './transport.js';

const maxBodyBytes = 8 * 1024 * 1024;
const goChunkingBuffer = 2048;
const maxUploadBytes = 256 * 1024 * 1024;

/** Builds the router with every resource family and the /sim control API. */
export function buildRouter(ctx: SimContext, controls: SimulatorControls): Router {
  const router = new Router();
  const revision = ctx.opts.revision;
  registerServer(router);
  registerInstances(router, revision);
  registerInstanceState(router, revision);
  registerInstanceLogs(router, revision);
  registerConsole(router, revision);
  registerFiles(router, revision);
  registerSnapshots(router, revision);
  registerOperations(router);
  registerImages(router);
  registerStorage(router);
  registerNetworks(router);
  registerCertificates(router);
  registerProjects(router);
  registerProfiles(router);
  // First match wins: in cluster mode these answer before host.ts's standalone cluster routes.
  if (ctx.cluster) registerCluster(router, ctx.cluster);
  registerHost(router);
  registerControl(router, controls);
  return router;
}

/**
 * Handles one HTTP request: identity and trust, routing, JSON body, handler, envelope. Any
 * unexpected exception becomes a 500 error envelope rather than a dropped connection.
 */
export function handleRequest(ctx: SimContext, router: Router, req: IncomingMessage, res: ServerResponse, identity: Identity): void {
  void (async () => {
    let response: SimResponse;
    let etag: string | undefined;
    let location: string | undefined;
    try {
      const url = new URL(req.url ?? '/', 'http://sim');
      const method = req.method ?? 'GET';
      if (url.pathname === '/1.0/events') {
        // A plain GET without upgrade headers: text/plain 400, as gorilla/websocket answers.
        res.writeHead(400, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end("Bad Request\nwebsocket: the client is not using the websocket protocol: 'upgrade' token not found in 'Connection' header\n");
        return;
      }
      const info = requestInfo(ctx, identity, url.searchParams);
      if (info.allProjects && url.searchParams.get('project')) throw new SimHttpError(400, 'Cannot specify a project when requesting all projects');
      logRequest(ctx, req, identity);
      if (ctx.frozen && !url.pathname.startsWith('/sim/')) await ctx.frozen;
      const route = router.match(method, url.pathname.replace(/\/+$/, '') || '/');
      if (!info.trusted && !route.untrusted) throw new SimHttpError(403, 'not authorized');
      const { body, raw } = await readBody(req, route.raw === true);
      response = await route.handler({ method, path: url.pathname, params: route.params, headers: req.headers, body, raw, info, ctx });
      if (response.kind === 'sync') ({ etag, location } = response);
    } catch (err) {
      response =
        err instanceof SimHttpError
          ? { kind: 'error', status: err.status, message: err.message }
          : { kind: 'error', status: 500, message: (err as Error).message ?? String(err) };
    }
    const headers: Record<string, string> = { 'Content-Type': response.kind === 'file' ? response.contentType : 'application/json' };
    if (etag) headers.ETag = etag;
    if (response.kind === 'async') headers.Location = response.operationUrl;
    else if (location) headers.Location = location;
    if ((response.kind === 'sync' || response.kind === 'file') && response.headers) Object.assign(headers, response.headers);
    if (res.destroyed) return;
    // File bodies go as the bytes they are (a pulled binary file, a recorded output).
    const body = response.kind === 'file' && Buffer.isBuffer(response.body) ? response.body : renderBody(response);
    // Go's server sends Content-Length when the whole body fits its 2 KiB chunking buffer, and
    // chunked framing beyond, as both daemons' answers show.
    const length = Buffer.byteLength(body);
    if (length <= goChunkingBuffer || response.kind === 'file') headers['Content-Length'] = String(length);
    res.writeHead(httpStatusOf(response), headers);
    res.end(body);
  })();
}

/** The daemon's debug log line for every request (HTTP or websocket upgrade), sent only when someone listens. */
export function logRequest(ctx: SimContext, req: IncomingMessage, identity: Identity): void {
  if (!ctx.hub.wants('logging')) return;
  ctx.hub.publish('logging', {
    message: 'Handling API request',
    level: 'debug',
    context: {
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      protocol: identity.requestor.protocol,
      username: identity.requestor.username,
      ip: identity.requestor.address,
    },
  });
}

/**
 * The request body: parsed JSON, or the raw bytes of a file upload (an image, sent as
 * application/octet-stream or multipart/form-data; any body of a route that takes them raw, as the
 * files API), which may be larger. A raw route gets the bytes as its `body` too.
 */
async function readBody(req: IncomingMessage, rawRoute: boolean): Promise<{ body: unknown; raw: Buffer | undefined }> {
  const type = String(req.headers['content-type'] ?? '');
  const upload = rawRoute || type.startsWith('application/octet-stream') || type.startsWith('multipart/');
  const limit = upload ? maxUploadBytes : maxBodyBytes;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new SimHttpError(400, 'Request body too large');
    chunks.push(chunk as Buffer);
  }
  if (rawRoute) {
    const bytes = Buffer.concat(chunks);
    return { body: bytes, raw: bytes };
  }
  if (upload) return { body: undefined, raw: Buffer.concat(chunks) };
  if (size === 0) return { body: undefined, raw: undefined };
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return { body: JSON.parse(text), raw: undefined };
  } catch (err) {
    throw new SimHttpError(400, `Failed to decode request body: ${(err as Error).message}`);
  }
}
