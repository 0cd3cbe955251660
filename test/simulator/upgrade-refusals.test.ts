import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestSim, type TestSim } from './sim-client.js';

/** A websocket upgrade the simulator refuses, from a client that does not wait for the answer. */
describe('refused websocket upgrades', () => {
  let t: TestSim | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('a client gone before the refusal does not take the simulator down', async () => {
    t = await startTestSim();
    const upgrade = (path: string) =>
      new Promise<void>((resolve) => {
        const s = connect(t!.sim.socketPath!, () => {
          s.write(
            `GET ${path} HTTP/1.1\r\nHost: sim\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`,
          );
          // Gone at once: the refusal is written to a socket whose peer is gone.
          s.destroy();
          resolve();
        });
        s.on('error', () => resolve());
      });
    for (let i = 0; i < 200; i++) {
      await upgrade('/1.0/operations/00000000-0000-0000-0000-000000000000/websocket?secret=x');
      await upgrade('/1.0/nothing-here');
    }
    const res = await t.api('GET', '/1.0');
    expect(res.status).toBe(200);
  });
});
