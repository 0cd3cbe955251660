import { afterEach, describe, expect, it } from 'vitest';
import type { SimulatorOptions } from '../../src/simulator/options.js';
import { startTestSim, type TestSim } from './sim-client.js';

let t: TestSim | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/**
 * Creates `n` instances and counts those a GET right after the 202 does not find (404). A delayed
 * record appears a minute after its 202, so "right after" holds however long a loaded machine takes
 * to send the GET (with half a second, a GET that came late found the record: CI counted 31 of 35).
 */
async function missedRightAfter(opts: SimulatorOptions, n: number): Promise<number> {
  t = await startTestSim({ seed: 41, ...opts, timings: { createRecordMs: 60_000, ...opts.timings } });
  let missed = 0;
  for (let i = 0; i < n; i++) {
    const created = await t.api('POST', '/1.0/instances', { name: `v${i}`, source: { type: 'image', alias: 'busybox' } });
    expect(created.status).toBe(202);
    if ((await t.api('GET', `/1.0/instances/v${i}`)).status === 404) missed++;
  }
  return missed;
}

/**
 * A GET right after a create's 202 is 404 only sometimes on the daemons (LXD 5.0.2: 11 of 18 on the
 * test bed, Incus 6.0.4: 21 of 30), not always (issue #41 item 8): the share is an option whose
 * default is the measured one.
 */
describe('a new instance right after the 202 of its create', () => {
  it.each([
    ['earlier', 0.6],
    ['later', 0.7],
  ] as const)('%s revision: is missing for about the measured share of creates by default (%s)', async (revision, share) => {
    const missed = await missedRightAfter({ revision }, 200);
    expect(missed / 200).toBeGreaterThan(share - 0.12);
    expect(missed / 200).toBeLessThan(share + 0.12);
  });

  it('is missing after every create with createVisibilityDelay: true, after none with false, after a given share otherwise', async () => {
    expect(await missedRightAfter({ createVisibilityDelay: true }, 20)).toBe(20);
    await t?.close();
    expect(await missedRightAfter({ createVisibilityDelay: false }, 20)).toBe(0);
    await t?.close();
    const quarter = await missedRightAfter({ createVisibilityDelay: 0.25 }, 200);
    expect(quarter / 200).toBeGreaterThan(0.13);
    expect(quarter / 200).toBeLessThan(0.37);
  });

  it('a seeded simulator repeats its draws', async () => {
    const first = await missedRightAfter({}, 50);
    await t?.close();
    expect(await missedRightAfter({}, 50)).toBe(first);
  });

  it('a refused create is refused in its operation after a 202 that says Running, even with createVisibilityDelay: false', async () => {
    t = await startTestSim({ createVisibilityDelay: false });
    const res = await t.api('POST', '/1.0/instances', { name: 'bad', source: { type: 'image', alias: 'busybox' }, config: { 'limits.memory': 'x' } });
    expect(res.body.metadata).toMatchObject({ status: 'Running' });
    expect(await t.waitOp(res)).toMatchObject({ status: 'Failure' });
  });
});
