import type { Duplex } from 'node:stream';
/**
 * The three response envelopes (seed §2.1, §2.2, §2.4) in the exact shape LXD 5.0.2 writes them:
 * every envelope carries all of type/status/status_code/operation/error_code/error/metadata.
 */

/** An error the handlers throw; the server turns it into an error envelope with this HTTP status. */
export class SimHttpError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 409 | 412 | 500 | 503,
    message: string,
  ) {
    super(message);
    this.name = 'SimHttpError';
  }
}

/** A handler's answer before serialisation. `raw` lets hot paths pass pre-serialised metadata JSON. */
export type SimResponse =
  | { kind: 'sync'; metadata: unknown; raw?: string; etag?: string; location?: string; headers?: Record<string, string> }
  | { kind: 'async'; operationUrl: string; operation: unknown }
  | { kind: 'error'; status: number; message: string }
  /** A file's content, not an envelope (instance log files, image exports, the files API), with headers of its own. */
  | { kind: 'file'; contentType: string; body: string | Buffer; headers?: Record<string, string> };

/** 200 sync response. */
export function sync(metadata: unknown, etag?: string): SimResponse {
  return etag === undefined ? { kind: 'sync', metadata } : { kind: 'sync', metadata, etag };
}

/** 201 Created with a `Location` and null metadata, as both daemons answer a synchronous create (profiles, projects, networks, pools, volumes). */
export function created(location: string): SimResponse {
  return { kind: 'sync', metadata: null, location };
}

/** 200 sync response whose metadata is already JSON text. */
export function syncRaw(raw: string): SimResponse {
  return { kind: 'sync', metadata: undefined, raw };
}

/** 202 async response for an operation. */
export function asyncOp(operationUrl: string, operation: unknown): SimResponse {
  return { kind: 'async', operationUrl, operation };
}

/** Serialises a response body (with LXD's trailing newline). */
export function renderBody(res: SimResponse): string | Buffer {
  switch (res.kind) {
    case 'sync': {
      const meta = res.raw ?? JSON.stringify(res.metadata ?? null);
      return `{"type":"sync","status":"Success","status_code":200,"operation":"","error_code":0,"error":"","metadata":${meta}}\n`;
    }
    case 'async':
      return `${JSON.stringify({
        type: 'async',
        status: 'Operation created',
        status_code: 100,
        operation: res.operationUrl,
        error_code: 0,
        error: '',
        metadata: res.operation,
      })}\n`;
    case 'file':
      return typeof res.body === 'string' ? res.body : res.body.toString('utf8');
    case 'error':
      return `${JSON.stringify({ type: 'error', status: '', status_code: 0, operation: '', error_code: res.status, error: res.message, metadata: null })}\n`;
  }
}

/** HTTP status of a response. */
export function httpStatusOf(res: SimResponse): number {
  if (res.kind === 'sync') return res.location ? 201 : 200;
  return res.kind === 'file' ? 200 : res.kind === 'async' ? 202 : res.status;
}

/** Refuses a websocket upgrade with the daemon's error envelope as a plain HTTP answer, then closes. */
export function refuseUpgrade(socket: Duplex, status: 400 | 403 | 404 | 500, message: string): void {
  const body = renderBody({ kind: 'error', status, message });
  const reason = { 400: 'Bad Request', 403: 'Forbidden', 404: 'Not Found', 500: 'Internal Server Error' }[status];
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
