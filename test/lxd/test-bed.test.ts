import { afterEach, expect, it } from 'vitest';
import { STATUS_RUNNING, STATUS_STOPPED, describeLxd, instanceStatus, lxc, waitForStatus } from '../support/lxd-bed.js';
import { launchTestInstance, crashInstance, startInstance, deleteTestInstance } from '../support/lxd-bed.js';

await describeLxd('the LXD test bed runs a busybox container that can be crashed and restarted', () => {
  let name: string | undefined;

  afterEach(async () => {
    if (name) await deleteTestInstance(name);
    name = undefined;
  });

  it('launches a Running container whose init is a live host process', async () => {
    name = await launchTestInstance();
    const state = await instanceStatus(name);
    expect(state.status).toBe('Running');
    expect(state.status_code).toBe(STATUS_RUNNING);
    expect(state.pid).toBeGreaterThan(0);
    expect(() => process.kill(state.pid, 0)).not.toThrow();
  });

  it('goes Stopped when its init is killed, and starts again', async () => {
    name = await launchTestInstance();
    await crashInstance(name);
    const stoppedAfterMs = await waitForStatus(name, STATUS_STOPPED, 5_000);
    expect(stoppedAfterMs).toBeLessThan(2_000);
    expect((await instanceStatus(name)).pid).toBe(0);

    await startInstance(name);
    await waitForStatus(name, STATUS_RUNNING, 5_000);
  });

  it('stops gracefully within a few seconds, because /sbin/testinit honours SIGPWR', async () => {
    name = await launchTestInstance();
    const start = performance.now();
    await lxc(['stop', name], 10_000);
    expect(performance.now() - start).toBeLessThan(4_000);
    expect((await instanceStatus(name)).status_code).toBe(STATUS_STOPPED);
  });

  it('deletes a container, and deleting it again is not an error', async () => {
    const launched = await launchTestInstance();
    await deleteTestInstance(launched);
    await expect(instanceStatus(launched)).rejects.toThrow(/not found/i);
    await deleteTestInstance(launched);
  });
});
