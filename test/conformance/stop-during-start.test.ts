import { expect, it } from 'vitest';
import { conformance } from './targets.js';

/**
 * A stop sent while a start runs, held the same on the simulator and the real daemons: the daemon
 * takes it (202) and refuses it in its operation, and the start goes on to Running. This is why
 * Reflex gives back a start of its own that an operator's stop met in flight
 * (src/remediation/act/give-back.ts): the operator's stop does not stop the instance.
 */
await conformance('a stop sent while a start runs', (target) => {
  it('is refused in its operation ("already stopped", or on the earlier revision "busy running a start"), and the start ends Running', async () => {
    const t = target();
    const name = await t.launch();
    try {
      await (await t.client.changeState(name, { action: 'stop', force: true })).wait({ timeoutMs: 20_000 });
      await t.slowNextStart(name);
      const start = await t.client.changeState(name, { action: 'start' });
      const stop = await t.client.changeState(name, { action: 'stop', timeout: -1, force: false });
      // LXD 5.0.2 says either: "already stopped" when the stop comes before the start's own work has
      // taken the instance's lock (a stop sent at once after the start's 202, measured), busy after.
      await expect(stop.wait({ timeoutMs: 30_000 })).rejects.toThrow(
        t.revision === 'later' ? /The instance is already stopped/ : /Instance is busy running a "start" operation|The instance is already stopped/,
      );
      await start.wait({ timeoutMs: 30_000 });
      expect((await t.client.getInstanceState(name)).status).toBe('Running');
    } finally {
      await t.remove(name);
    }
  }, 60_000);
});
