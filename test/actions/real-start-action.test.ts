import { afterAll, expect, it } from 'vitest';
import type { ActionContext } from '../../src/actions/action.js';
import { runAction } from '../../src/actions/define-action.js';
import { builtinActions } from '../../src/actions/registry.js';
import { InstanceClient } from '../../src/client/client.js';
import { parseTarget } from '../../src/client/target.js';
import { describeEachBed } from '../support/daemon-bed.js';

/**
 * The start action on the real daemons (LXD 5.0.2, Incus 6.0; on the simulator:
 * start-action.test.ts): read Stopped under the lock, then someone else's start ran before its own,
 * which the daemon refuses ("The instance is already running"): Running is what it was for.
 */
await describeEachBed('the start action', (bed) => {
  const client = new InstanceClient(parseTarget(bed.target));
  afterAll(() => client.close());

  it("ends as a skip, not a failure, when its start is refused because someone else's start ran after the instance was read", async () => {
    const name = await bed.launch();
    try {
      const ctx: ActionContext<unknown> = {
        client,
        clientNoting: () => client,
        instance: name,
        params: {},
        dryRun: false,
        observed: { status: 'Stopped', status_code: 102 },
        audit: async () => undefined,
      };
      const outcome = await runAction(builtinActions.get('start'), ctx);
      expect(outcome).toMatchObject({ result: 'skipped', summary: expect.stringContaining('The instance is already running') });
    } finally {
      await bed.remove(name);
    }
  }, 60_000);
});
