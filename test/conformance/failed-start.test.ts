import { expect, it } from 'vitest';
import WebSocket from 'ws';
import { conformance } from './targets.js';

interface Frame {
  type: string;
  timestamp: string;
  metadata: { id?: string; status_code?: number; err?: string; action?: string; source?: string; requestor?: unknown };
}

/**
 * What a failed start sends, held the same on the simulator and the real daemons: Reflex tells it
 * from a crash by the failed operation (src/events/intent.ts, StartFailures), since the stop that
 * follows is the one a crash sends.
 */
await conformance('a failed start is reported as a failed operation, then a stop without requestor', (target) => {
  it("the start fails with forkstart's error, an instance-shutdown without requestor follows, and no instance-started", async () => {
    const t = target();
    const name = await t.launch();
    const { url, options } = t.client.eventsEndpoint(['operation', 'lifecycle']);
    const ws = new WebSocket(url, options);
    const opened = new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    try {
      await (await t.client.changeState(name, { action: 'stop', force: true })).wait({ timeoutMs: 20_000 });
      await t.breakNextStart(name);
      const frames: Frame[] = [];
      ws.on('message', (data) => frames.push(JSON.parse(String(data)) as Frame));
      await opened;

      const op = await t.client.changeState(name, { action: 'start', timeout: 30 });
      await expect(op.wait({ timeoutMs: 30_000 })).rejects.toThrow(/forkstart/);
      const ofInstance = () => frames.filter((f) => f.type === 'lifecycle' && f.metadata.source === `/1.0/instances/${name}`);
      await expect.poll(() => ofInstance().map((f) => f.metadata.action), { timeout: 5_000 }).toContain('instance-shutdown');

      const failed = frames.find((f) => f.type === 'operation' && f.metadata.id === op.id && f.metadata.status_code === 400);
      expect(failed?.metadata.err).toMatch(new RegExp(`^Failed to run: \\S+ forkstart ${name} \\S+ \\S+: exit status 1$`));
      const stop = ofInstance().find((f) => f.metadata.action === 'instance-shutdown')!;
      expect(stop.metadata.requestor ?? undefined, 'no requestor, as after a crash').toBeUndefined();
      expect(Date.parse(stop.timestamp)).toBeGreaterThanOrEqual(Date.parse(failed!.timestamp));
      expect(ofInstance().map((f) => f.metadata.action)).not.toContain('instance-started');
    } finally {
      ws.terminate();
      await t.remove(name);
    }
  }, 60_000);
});
