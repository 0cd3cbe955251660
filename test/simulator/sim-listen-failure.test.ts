import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runReflex } from '../support/reflex-process.js';

/**
 * A CI script starts `reflex sim` and waits for its socket: a simulator that cannot listen on one of
 * its addresses must exit at once, not keep serving the others (the script would hang on them).
 */
describe('reflex sim with an address it cannot listen on', () => {
  let taken: Server;
  let port: number;

  beforeAll(async () => {
    taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    port = (taken.address() as { port: number }).port;
  });

  afterAll(async () => {
    await new Promise((resolve) => taken?.close(resolve));
  });

  it('exits 1 naming the address, after removing the unix socket it had opened first', async () => {
    const socket = join(tmpdir(), `reflex-sim-listen-${process.pid}.sock`);
    const res = await runReflex(['sim', '--listen', `unix:${socket}`, '--listen', `https://127.0.0.1:${port}`]);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(`reflex: reflex sim cannot listen on https://127.0.0.1:${port}: the address is in use\n`);
    expect(res.stdout).toBe('');
    expect(existsSync(socket)).toBe(false);
  }, 60_000);
});
