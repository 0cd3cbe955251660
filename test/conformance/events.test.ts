import { expect, it } from 'vitest';
import WebSocket from 'ws';
import { transportConformance } from './targets.js';

await transportConformance('the events endpoint streams operation events of the scope', (target) => {
  it('the URL names the types and the scope', () => {
    const c = target().client;
    const scoped = c.eventsEndpoint(['operation', 'lifecycle']);
    expect(scoped.url).toMatch(/\/1\.0\/events\?type=operation%2Clifecycle/);
    expect(c.eventsEndpoint(['lifecycle'], { allProjects: true }).url).toMatch(/all-projects=true/);
    expect(c.withProject('p1').eventsEndpoint(['lifecycle']).url).toMatch(/project=p1/);
  });

  it('a subscriber receives the operation events of a state change it caused', async () => {
    const t = target();
    const name = await t.launch();
    const { url, options } = t.client.eventsEndpoint(['operation']);
    const ws = new WebSocket(url, options);
    try {
      const seen: { id: string; status_code: number }[] = [];
      ws.on('message', (data) => seen.push(JSON.parse(String(data)).metadata));
      await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
      const op = await t.client.changeState(name, { action: 'stop', force: true });
      await op.wait({ timeoutMs: 20_000 });
      await expect.poll(() => seen.filter((m) => m.id === op.id).map((m) => m.status_code), { timeout: 5_000 }).toContain(200);
    } finally {
      ws.terminate();
      await t.remove(name);
    }
  });
});
