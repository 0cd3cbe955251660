import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InstanceClient } from '../../src/client/client.js';
import { parseTarget } from '../../src/client/target.js';

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
