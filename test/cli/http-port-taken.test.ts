import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { reflexArgs, uniquePrefix } from '../support/redis.js';
import { runReflex } from '../support/reflex-process.js';

/**
 * `/metrics`, `/healthz` and `/readyz` are how an operator (and systemd, Kubernetes, Prometheus)
 * knows Reflex works: a `reflex run` that cannot serve them does not start, rather than run unwatched.
 */
describe('reflex run on a taken HTTP port', () => {
  let sim: RunningSimulator;
  let taken: Server;
  let port: number;

  beforeAll(async () => {
    sim = await startSimulator({ instances: 1 });
    taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    port = (taken.address() as { port: number }).port;
  });

  afterAll(async () => {
    await new Promise((resolve) => taken?.close(resolve));
    await sim?.stop();
  });

  it('exits 3 with one line naming the address and how to choose another port', async () => {
    const res = await runReflex(
      ['run', ...reflexArgs(uniquePrefix('port'), `unix://${sim.socketPath}`), '--rules', 'rules', '--http-port', String(port)],
      { REFLEX_LOG_LEVEL: 'silent' },
    );
    expect(res.code).toBe(3);
    expect(res.stderr).toBe(
      `reflex: cannot serve /metrics, /healthz and /readyz on 127.0.0.1:${port}: the port is taken (another reflex run, or another service); set --http-port (REFLEX_HTTP_PORT, httpPort) to a free port, or 0 to run without the HTTP server\n`,
    );
  }, 30_000);
});
