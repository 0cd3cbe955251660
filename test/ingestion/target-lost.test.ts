import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { reflexArgs, uniquePrefix } from '../support/redis.js';
import { startReflexProcess, type ReflexProcess } from '../support/reflex-process.js';
import { freePort } from '../support/free-port.js';

async function readyz(port: number): Promise<{ status: number; body: { checks: Record<string, { ok: boolean; detail: string }> } }> {
  const res = await fetch(`http://127.0.0.1:${port}/readyz`);
  return { status: res.status, body: (await res.json()) as { checks: Record<string, { ok: boolean; detail: string }> } };
}

describe('a worker whose target goes away', () => {
  let reflex: ReflexProcess | undefined;
  let sim: RunningSimulator | undefined;

  afterEach(async () => {
    await reflex?.stop();
    await sim?.stop();
    reflex = sim = undefined;
  });

  it('says so at error level and /readyz turns 503 naming the unreachable target once the grace is over; it comes back by itself', async () => {
    sim = await startSimulator({ instances: 2 });
    const port = await freePort();
    const args = ['run', ...reflexArgs(uniquePrefix('lost'), `unix://${sim.socketPath}`), '--rules', 'rules', '--http-port', String(port)];
    reflex = startReflexProcess(args, { REFLEX_LOG_LEVEL: 'info', REFLEX_STREAM_LOSS_GRACE_MS: '1s' });
    await reflex.waitUntilWatching();
    expect((await readyz(port)).status).toBe(200);

    const socketPath = sim.socketPath!;
    await sim.stop();
    const lost = await reflex.waitForLog('lost the event stream of the target', 15_000);
    expect(lost.level).toBe(50); // pino's error
    await expect.poll(async () => (await readyz(port)).status, { timeout: 10_000, interval: 200 }).toBe(503);
    const down = await readyz(port);
    expect(down.body.checks.subscriber).toEqual({
      ok: false,
      detail: expect.stringMatching(
        /^lease holder, event stream lost for \d+ s \(longer than the grace of 1 s\): the target is unreachable, no event is seen$/,
      ),
    });

    // The daemon back on the same socket: the stream reconnects and /readyz is ready again.
    sim = await startSimulator({ instances: 2, listen: [`unix:${socketPath}`] });
    const back = reflex.logs.length;
    await expect.poll(() => reflex!.logs.slice(back).some((l) => l.msg === 'event stream connected'), { timeout: 20_000, interval: 100 }).toBe(true);
    await expect.poll(async () => (await readyz(port)).status, { timeout: 10_000, interval: 200 }).toBe(200);
  }, 60_000);

  it('with --wait-for-target starts without its target, logs an error, and is not ready until the target answers', async () => {
    const socketPath = join(mkdtempSync(join(tmpdir(), 'reflex-late-')), 'late.sock');
    const port = await freePort();
    const args = [
      'run',
      ...reflexArgs(uniquePrefix('late'), `unix://${socketPath}`),
      '--rules',
      'rules',
      '--http-port',
      String(port),
      '--wait-for-target',
    ];
    reflex = startReflexProcess(args, { REFLEX_LOG_LEVEL: 'info' });
    const said = await reflex.waitForLog('target does not answer at start-up');
    expect(said.level).toBe(50);
    await reflex.waitForLog('reflex running');
    expect((await readyz(port)).status).toBe(503);

    sim = await startSimulator({ instances: 1, listen: [`unix:${socketPath}`] });
    await reflex.waitForLog('event stream connected', 20_000);
    await expect.poll(async () => (await readyz(port)).status, { timeout: 10_000, interval: 200 }).toBe(200);
  }, 60_000);
});
