import { request } from 'undici';
import { expect, it } from 'vitest';
import { ApiError } from '../../src/client/api-error.js';
import type { InstanceClient } from '../../src/client/client.js';
import { conformance } from './targets.js';

/** A raw GET or DELETE through the target client's connection (log files are not envelopes). */
async function raw(
  client: InstanceClient,
  method: 'GET' | 'DELETE',
  path: string,
): Promise<{ status: number; body: Buffer; headers: Record<string, unknown> }> {
  const res = await request(`${client.transport.activeOrigin}${path}`, { method, dispatcher: client.transport['agent'] });
  return { status: res.statusCode, body: Buffer.from(await res.body.arrayBuffer()), headers: res.headers };
}

await conformance('exec with record-output: the output kept as log files of the instance (issue #28)', (target) => {
  it('names the files in the operation, serves them, lists them and deletes them, where each daemon keeps them', async () => {
    const t = target();
    const later = t.revision === 'later';
    const name = await t.launch();
    try {
      const res = await t.client.transport.request('POST', `/1.0/instances/${name}/exec`, {
        body: { command: ['sh', '-c', 'echo out; echo err >&2; exit 3'], 'record-output': true, 'wait-for-websocket': false, interactive: false },
      });
      const opId = String(res.envelope.operation).split('/').pop()!;
      const op = (await t.client.transport.request('GET', `/1.0/operations/${opId}/wait?timeout=30`)).envelope.metadata as {
        status: string;
        metadata: { output: Record<string, string>; return: number };
      };
      const dir = `/1.0/instances/${name}/logs/${later ? 'exec-output/' : ''}`;
      expect(op.status).toBe('Success');
      expect(op.metadata).toEqual({ output: { '1': `${dir}exec_${opId}.stdout`, '2': `${dir}exec_${opId}.stderr` }, return: 3 });

      const stdout = await raw(t.client, 'GET', op.metadata.output['1']!);
      expect({ status: stdout.status, body: stdout.body.toString('utf8'), type: stdout.headers['content-type'] }).toEqual({
        status: 200,
        body: 'out\n',
        type: 'application/octet-stream',
      });
      expect(stdout.headers['content-disposition']).toBe(`inline;filename=exec_${opId}.stdout`);
      expect((await raw(t.client, 'GET', op.metadata.output['2']!)).body.toString('utf8')).toBe('err\n');

      const listed = (await t.client.transport.request('GET', later ? `/1.0/instances/${name}/logs/exec-output` : `/1.0/instances/${name}/logs`))
        .envelope.metadata as string[];
      expect(listed).toEqual(expect.arrayContaining([op.metadata.output['1'], op.metadata.output['2']]));
      if (later)
        expect((await t.client.transport.request('GET', `/1.0/instances/${name}/logs`)).envelope.metadata).not.toContain(op.metadata.output['1']);

      expect((await raw(t.client, 'DELETE', op.metadata.output['1']!)).status).toBe(200);
      const gone = await raw(t.client, 'GET', op.metadata.output['1']!);
      const where = later ? `/var/lib/incus/containers/${name}/exec-output/exec_${opId}.stdout` : `/var/log/lxd/${name}/exec_${opId}.stdout`;
      expect({ status: gone.status, error: JSON.parse(gone.body.toString('utf8')).error }).toEqual({
        status: later ? 404 : 500,
        error: `open ${where}: no such file or directory`,
      });
      await expect(t.client.transport.request('DELETE', `/1.0/instances/${name}/logs/lxc.log`)).rejects.toMatchObject({
        status: 400,
        serverError: later ? 'Only log files excluding qemu.log and lxc.log may be deleted' : 'lxc.log and lxc.conf may not be deleted',
      } satisfies Partial<ApiError>);
    } finally {
      await t.remove(name);
    }
  });
});
