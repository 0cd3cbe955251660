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

  it('reports a target it cannot read before the taken port: the config is fixed first', async () => {
    const res = await runReflex(
      ['run', ...reflexArgs(uniquePrefix('port'), 'unix://relative/socket'), '--rules', 'rules', '--http-port', String(port)],
      {
        REFLEX_LOG_LEVEL: 'silent',
      },
    );
    expect(res.stderr).toMatch(/target "unix:\/\/relative\/socket": a unix socket path must be absolute/);
    expect(res.stderr).not.toMatch(/port is taken/);
  }, 30_000);

  it('says only that line, logging no error first, while its start is busy with a fleet', async () => {
    // 300 instances: the first resync still runs when the HTTP server would be bound last.
    const fleet = await startSimulator({ instances: 300 });
    try {
      const res = await runReflex(
        ['run', ...reflexArgs(uniquePrefix('port'), `unix://${fleet.socketPath}`), '--rules', 'rules', '--no-typecheck', '--http-port', String(port)],
        { REFLEX_LOG_LEVEL: 'info' },
      );
      expect(res.code).toBe(3);
      expect(res.stderr).toMatch(/^reflex: cannot serve \/metrics, \/healthz and \/readyz on 127\.0\.0\.1:\d+: the port is taken[^\n]*\n$/);
      const logged = res.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { level: number; msg: string });
      expect(logged.filter((l) => l.level >= 40).map((l) => l.msg)).toEqual([]);
      expect(res.stdout).not.toMatch(/stack/);
    } finally {
      await fleet.stop();
    }
  }, 60_000);
});
