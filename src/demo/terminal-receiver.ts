import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { NotifyConfig } from '../notify/notify-config.js';
import { verifyWebhookSignature } from '../notify/webhook-signature.js';

interface ReceivedAlert {
  kind: string;
  status: string;
  severity: string;
  instance: string;
  summary: string;
  actions?: { action: string; result: string; summary?: string; operationId?: string }[];
  outcome?: string;
}

/**
 * The demo's notification receiver: a signed-webhook endpoint on 127.0.0.1 that checks each
 * message's Standard Webhooks signature and prints it, as a chat channel would show it.
 */
export class TerminalReceiver {
  private readonly secret = `whsec_${randomBytes(32).toString('base64')}`;
  private server: Server | undefined;

  constructor(private readonly say: (line: string) => void) {}

  /** Starts listening; answers the notification settings (with the env var holding the key) for the worker. */
  async start(): Promise<{ config: NotifyConfig; env: Record<string, string> }> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const check = verifyWebhookSignature({ secret: this.secret, rawBody: raw, headers: req.headers });
        res.writeHead(check.ok ? 204 : 401).end();
        if (!check.ok) return this.say(`${clock()}  RECEIVED     (refused: signature ${check.reason})`);
        const body = JSON.parse(raw) as { alerts?: ReceivedAlert[] };
        for (const a of body.alerts ?? []) this.say(`${clock()}  RECEIVED     ${a.instance.padEnd(8)} chat: ${describe(a)}`);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    return {
      env: { REFLEX_DEMO_WEBHOOK_KEY: this.secret },
      config: {
        receivers: [{ kind: 'webhook', name: 'terminal', url: `http://127.0.0.1:${port}/reflex`, secretEnv: 'REFLEX_DEMO_WEBHOOK_KEY' }],
        // The first message at once (no group wait), so a crash healed within seconds still shows as
        // firing, then resolved; after that at most one message per instance every 5 s (a crash loop
        // is not a message per crash).
        route: { receiver: 'terminal', groupBy: ['instance'], groupWaitMs: 0, groupIntervalMs: 5_000, repeatIntervalMs: 3_600_000 },
      } as NotifyConfig,
    };
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }
}

function clock(): string {
  return new Date().toISOString().slice(11, 23);
}

function describe(a: ReceivedAlert): string {
  const did = (a.actions ?? []).map((x) => `${x.action} ${x.result}${x.operationId ? ` (operation ${x.operationId.slice(0, 8)})` : ''}`).join(', ');
  return `[${a.status}] ${a.kind} (${a.severity}) ${a.summary}${did ? `; Reflex: ${did}` : ''}${a.outcome ? `; ${a.outcome}` : ''}`;
}
