import { afterEach, expect, it } from 'vitest';
import { describeBed, lxdBed, STATUS_RUNNING, STATUS_STOPPED } from '../support/daemon-bed.js';

await describeBed(lxdBed, 'the LXD test bed runs a busybox container that can be crashed and restarted', () => {
  let name: string | undefined;

  afterEach(async () => {
    if (name) await lxdBed.remove(name);
    name = undefined;
  });

  it('launches a Running container whose init is a live host process', async () => {
    name = await lxdBed.launch();
    const state = await lxdBed.status(name);
    expect(state.status).toBe('Running');
    expect(state.status_code).toBe(STATUS_RUNNING);
    expect(state.pid).toBeGreaterThan(0);
    expect(() => process.kill(state.pid, 0)).not.toThrow();
  });

  it('goes Stopped when its init is killed, and starts again', async () => {
    name = await lxdBed.launch();
    await lxdBed.crash(name);
    const stoppedAfterMs = await lxdBed.waitForStatus(name, STATUS_STOPPED, 5_000);
    expect(stoppedAfterMs).toBeLessThan(2_000);
    expect((await lxdBed.status(name)).pid).toBe(0);

    await lxdBed.start(name);
    await lxdBed.waitForStatus(name, STATUS_RUNNING, 5_000);
  });

  it('stops gracefully within a few seconds, because /sbin/testinit honours SIGPWR', async () => {
    name = await lxdBed.launch();
    const start = performance.now();
    await lxdBed.cli(['stop', name], 10_000);
    expect(performance.now() - start).toBeLessThan(4_000);
    expect((await lxdBed.status(name)).status_code).toBe(STATUS_STOPPED);
  });

  it('deletes a container, and deleting it again is not an error', async () => {
    const launched = await lxdBed.launch();
    await lxdBed.remove(launched);
    await expect(lxdBed.status(launched)).rejects.toThrow(/not found/i);
    await lxdBed.remove(launched);
  });
});
