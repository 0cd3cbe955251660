import { describe, expect, it } from 'vitest';
import type { ActionContext } from '../../src/actions/action.js';
import { runAction } from '../../src/actions/define-action.js';
import { builtinActions } from '../../src/actions/registry.js';
import { fileSimulator, type FileSimulator } from '../support/file-simulator.js';

describe('the start action', () => {
  let s: FileSimulator;
  fileSimulator({ startMs: 10, stopMs: 10, taskMs: 10 }, (started) => (s = started));

  const context = (instance: string, observed: ActionContext['observed']): ActionContext<unknown> => ({
    client: s.client,
    clientNoting: () => s.client,
    instance,
    params: {},
    dryRun: false,
    observed,
    audit: async () => undefined,
  });

  it("ends as a skip, not a failure, when its start is refused because someone else's start ran after the instance was read", async () => {
    // Read Stopped under the lock; an operator's start lands before this one's call.
    s.sim.controls.addInstance({ name: 'raced', status: 'Running' });
    const outcome = await runAction(builtinActions.get('start'), context('raced', { status: 'Stopped', status_code: 102 }));
    expect(outcome).toMatchObject({ result: 'skipped', summary: expect.stringContaining('started by someone else') });
  });

  it('still fails when its start is refused and the instance stays down', async () => {
    s.sim.controls.addInstance({ name: 'refused', status: 'Stopped' });
    s.sim.controls.failNext('refused', 1, 'Injected failure');
    await expect(runAction(builtinActions.get('start'), context('refused', { status: 'Stopped', status_code: 102 }))).rejects.toThrow(
      /Injected failure/,
    );
  });
});
