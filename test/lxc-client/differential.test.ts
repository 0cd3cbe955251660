import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeBed, lxdBed } from '../support/daemon-bed.js';
import { stepsFor, titleOf, type Names, runDifferential, type DifferentialResults } from './differential-scenario.js';
import { startSimRemote, type SimRemote } from './sim-remote.js';

/**
 * The conformance check is the real client: the same list of `lxc` commands runs against the
 * real LXD 5.0.2 daemon (remote `local`) and against the simulator (remote `sim`, over HTTPS with
 * a trust password), and every command's normalised stdout, stderr and exit code must be equal.
 */
let t: SimRemote;
const scenario = stepsFor('lxc');
const names: Names = (() => {
  const n = `rt-dx${randomBytes(3).toString('hex')}`;
  return { n, copy: `${n}-copy`, launched: `${n}-launch` };
})();
let results: DifferentialResults;

await describeBed(lxdBed, 'lxc commands give the same output against the simulator as against LXD 5.0.2', () => {
  beforeAll(async () => {
    t = await startSimRemote({ trustPassword: 'diff' });
    await t.lxc.ok(['remote', 'add', 'sim', t.sim.httpsUrl!, '--password', 'diff', '--accept-certificate']);
    results = await runDifferential(t, scenario, names, 'lxc');
  }, 10 * 60_000);

  afterAll(async () => {
    for (const name of [...Object.values(names), `${names.n}-pub`]) await t?.lxc.run(['delete', '--force', `local:${name}`]);
    await t?.lxc.run(['image', 'delete', `local:${names.n}-img`]);
    await t?.lxc.run(['profile', 'delete', `local:${names.n}-prof`]);
    await t?.lxc.run(['project', 'delete', `local:${names.n}-proj`]);
    await t?.close();
  });

  for (const [i, step] of scenario.entries()) {
    it(`${i + 1}. ${titleOf(step)}`, () => {
      const r = results.get(`${i}`);
      expect(r?.sim).toEqual(r?.real);
    });
  }
});
