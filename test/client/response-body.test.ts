import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InstanceClient } from '../../src/client/client.js';
import { parseTarget } from '../../src/client/target.js';
import { parseMetadataList } from '../../src/client/envelope.js';
import { instanceSchema } from '../../src/client/instance.js';

describe('a daemon answer sent in pieces', () => {
  it('reads as sent when its characters are cut between pieces and it opens with a byte-order mark', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'reflex-body-'));
    const socketPath = join(dir, 'unix.socket');
    const description = 'Привет, 世界 🚀 '.repeat(2_000);
    const body = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from(
        JSON.stringify({
          type: 'sync',
          status: 'Success',
          status_code: 200,
          operation: '',
          error_code: 0,
          error: '',
          metadata: { name: 'c1', status: 'Running', status_code: 103, description, config: {}, devices: {} },
        }),
      ),
    ]);
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      // Pieces of 7 bytes: most of the 2-, 3- and 4-byte characters are cut between two of them.
      for (let i = 0; i < body.length; i += 7) res.write(body.subarray(i, i + 7));
      res.end();
    });
    await new Promise<void>((r) => server.listen(socketPath, r));
    const client = new InstanceClient(parseTarget(`unix://${socketPath}`));
    try {
      expect((await client.getInstance('c1')).value).toMatchObject({ name: 'c1', description });
    } finally {
      await client.close();
      await new Promise((r) => server.close(r));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the daemon's listing of thousands of instances", () => {
  /** A daemon on a unix socket answering GET /1.0/instances with `instances`; its client. */
  async function listingDaemon(instances: unknown[]): Promise<{ client: InstanceClient; close(): Promise<void> }> {
    const dir = mkdtempSync(join(tmpdir(), 'reflex-listing-'));
    const socketPath = join(dir, 'unix.socket');
    const body = JSON.stringify({ type: 'sync', status: 'Success', status_code: 200, operation: '', error_code: 0, error: '', metadata: instances });
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    });
    await new Promise<void>((r) => server.listen(socketPath, r));
    const client = new InstanceClient(parseTarget(`unix://${socketPath}`));
    return {
      client,
      async close() {
        await client.close();
        await new Promise((r) => server.close(r));
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const instance = (i: number) => ({
    name: `inst-${i}`,
    status: 'Running',
    status_code: 103,
    config: { 'volatile.uuid': `u-${i}`, 'user.note': 'x'.repeat(1_000) },
    devices: {},
  });

  it('is read whole, parsed and checked in steps that let other work run between them', async () => {
    const daemon = await listingDaemon(Array.from({ length: 4_000 }, (_, i) => instance(i)));
    try {
      const listed = (await daemon.client.listInstances()) as { name: string }[];
      expect(listed).toHaveLength(4_000);
      expect(listed[3_999]).toMatchObject(instance(3_999));
    } finally {
      await daemon.close();
    }
    // The check of the parsed list, alone: other callbacks run between its steps (the parse's are test/input/large-json.test.ts).
    let turns = 0;
    let counting = true;
    const tick = () => {
      turns++;
      if (counting) setImmediate(tick);
    };
    setImmediate(tick);
    const checked = await parseMetadataList(
      instanceSchema,
      Array.from({ length: 4_000 }, (_, i) => instance(i)),
      'GET',
      '/1.0/instances',
    );
    counting = false;
    expect(checked).toHaveLength(4_000);
    expect(turns, 'turns of the event loop while checking').toBeGreaterThan(4);
  });

  it("names the instance's index and field that do not fit, as for a short listing", async () => {
    const list = Array.from({ length: 4_000 }, (_, i) => instance(i));
    (list[2_345] as { status_code: unknown }).status_code = 'running';
    const daemon = await listingDaemon(list);
    try {
      await expect(daemon.client.listInstances()).rejects.toMatchObject({
        code: 'API_BAD_RESPONSE',
        message: expect.stringContaining("the answer's metadata.2345.status_code does not fit"),
      });
    } finally {
      await daemon.close();
    }
  });
});
