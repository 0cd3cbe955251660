import { randomBytes } from 'node:crypto';
import { request } from 'undici';
import { expect, it } from 'vitest';
import { conformance, launchPerTest, type ConformanceTarget } from './targets.js';

/** One request through the target client's own connection; the body as text. */
async function call(t: ConformanceTarget, method: string, path: string, body?: string | Buffer, type = 'application/json') {
  const res = await request(`${t.client.transport.activeOrigin}${path}`, {
    method: method as 'GET',
    body,
    headers: body === undefined ? {} : { 'content-type': type },
    dispatcher: t.client.transport['agent'],
  });
  return { status: res.statusCode, text: await res.body.text() };
}

async function waitFor(t: ConformanceTarget, answer: { text: string }): Promise<Record<string, any>> {
  const op = JSON.parse(answer.text) as { operation: string };
  return JSON.parse((await call(t, 'GET', `${op.operation}/wait?timeout=120`)).text).metadata;
}

/**
 * A published image is a tarball of the instance's root filesystem: an instance made from it has
 * the files the published one had (issue #41 item 6), on LXD 5.0.2, Incus 6.0.4 and the simulator.
 */
await conformance('publish carries the instance’s files into the image', (target) => {
  const launch = launchPerTest(target);

  it('a file written before the publish is in an instance made from the image', async () => {
    const t = target();
    const source = await launch();
    await (await t.client.changeState(source, { action: 'stop', force: true })).wait({ timeoutMs: 30_000 });
    const file = `/root/rt-published-${randomBytes(3).toString('hex')}`;
    expect((await call(t, 'POST', `/1.0/instances/${source}/files?path=${file}`, 'carried\n', 'application/octet-stream')).status).toBe(200);
    const published = await waitFor(t, await call(t, 'POST', '/1.0/images', JSON.stringify({ source: { type: 'instance', name: source } })));
    expect(published.status).toBe('Success');
    const fingerprint = String(published.metadata.fingerprint);
    const made = `rt-frompub-${randomBytes(3).toString('hex')}`;
    try {
      const created = await waitFor(
        t,
        await call(t, 'POST', '/1.0/instances', JSON.stringify({ name: made, source: { type: 'image', fingerprint } })),
      );
      expect(created.status).toBe('Success');
      const pulled = await call(t, 'GET', `/1.0/instances/${made}/files?path=${file}`);
      expect(pulled).toEqual({ status: 200, text: 'carried\n' });
    } finally {
      await t.remove(made);
      await waitFor(t, await call(t, 'DELETE', `/1.0/images/${fingerprint}`)).catch(() => undefined);
    }
  }, 180_000);
});
