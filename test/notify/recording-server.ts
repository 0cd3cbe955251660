import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request as a receiver saw it: the raw body is kept, since signatures cover exact bytes. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  raw: string;
  json: unknown;
  at: number;
}

/** What the server answers; called per request with the number of requests so far (1-based). */
export type Responder = (n: number, req: RecordedRequest) => { status: number; headers?: Record<string, string>; body?: string };

/** A local HTTP receiver on 127.0.0.1 that records every request. */
export interface RecordingServer {
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export async function startRecordingServer(respond: Responder = () => ({ status: 200, body: 'ok' })): Promise<RecordingServer> {
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      try {
        json = JSON.parse(raw);
      } catch {
        json = undefined;
      }
      const rec: RecordedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, raw, json, at: Date.now() };
      requests.push(rec);
      const answer = respond(requests.length, rec);
      res.writeHead(answer.status, answer.headers ?? { 'content-type': 'text/plain' });
      res.end(answer.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** An alert as Reflex's webhook receiver sends it in a body's `alerts` (the fields tests read). */
export interface SentAlert {
  kind: string;
  status: string;
  severity: string;
  instance: string;
  project: string;
  summary: string;
  actions: { action: string; result: string; summary?: string; operationId?: string }[];
  outcome?: string;
  correlationId: string;
  auditUrl?: string;
  endsAt?: string;
}
