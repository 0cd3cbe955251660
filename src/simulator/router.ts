import type { IncomingHttpHeaders } from 'node:http';
import type { RequestInfo, SimContext } from './context.js';
import { SimHttpError, type SimResponse } from './envelope.js';

/** One parsed request as handlers see it. */
export interface SimRequest {
  method: string;
  path: string;
  params: Record<string, string>;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body (undefined when empty, or for an upload); the bytes as they came for a route that takes them raw. */
  body: unknown;
  /** The bytes of an upload (application/octet-stream or multipart/form-data). */
  raw?: Buffer;
  info: RequestInfo;
  ctx: SimContext;
}

/** A request handler. */
export type SimHandler = (req: SimRequest) => SimResponse | Promise<SimResponse>;

interface Route {
  method: string;
  segments: string[];
  handler: SimHandler;
  /** Reachable by clients the trust store does not know (GET /, GET /1.0, POST /1.0/certificates). */
  untrusted: boolean;
  /** Takes its body as bytes (a Buffer), not JSON (file pushes). */
  raw: boolean;
}

/** A minimal method + path router; `:name` segments capture (URL-decoded) parameters. */
export class Router {
  private readonly routes: Route[] = [];

  /** Adds a route. */
  on(method: string, pattern: string, handler: SimHandler, opts: { untrusted?: boolean; raw?: boolean } = {}): this {
    this.routes.push({ method, segments: pattern.split('/').filter(Boolean), handler, untrusted: opts.untrusted ?? false, raw: opts.raw ?? false });
    return this;
  }

  /**
   * Finds the handler of a request. 404 "not found" when no route has this path, and also when the
   * path exists for other methods (LXD says 501 there; the seed allows only 400-500 statuses we use).
   */
  match(method: string, path: string): { handler: SimHandler; params: Record<string, string>; untrusted: boolean; raw: boolean } {
    const parts = path.split('/').filter(Boolean);
    for (const r of this.routes) {
      if (r.method !== method || r.segments.length !== parts.length) continue;
      const params: Record<string, string> = {};
      let ok = true;
      for (let i = 0; i < parts.length && ok; i++) {
        const seg = r.segments[i]!;
        if (seg.startsWith(':')) params[seg.slice(1)] = decodeURIComponent(parts[i]!);
        else ok = seg === parts[i];
      }
      if (ok) return { handler: r.handler, params, untrusted: r.untrusted, raw: r.raw };
    }
    throw new SimHttpError(404, 'not found');
  }
}
