import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeBed, incusBed } from '../support/daemon-bed.js';
import { stepsFor, titleOf, type Names, runDifferential, type DifferentialResults } from './differential-scenario.js';
import { startSimRemote, type SimRemote } from './sim-remote.js';

/**
 * The conformance check of the later revision is the real `incus` client: the same list of
 * commands runs against the real Incus 6.0 daemon (remote `local`) and against the simulator in
 * its later revision (remote `sim`, over HTTPS, added with a trust token), and every command's
 * normalised stdout, stderr and exit code must be equal. The list is the `lxc` differential's
 * (differential-scenario.ts) with `incus` spellings where the client differs, plus the checks of
 * issue #28 (a real shell, files, refusals and their channel, `Started:`).
 */
let t: SimRemote;
const scenario = stepsFor('incus');
const names: Names = (() => {
  const n = `rt-ix${randomBytes(3).toString('hex')}`;
  return { n, copy: `${n}-copy`, launched: `${n}-launch` };
})();
let results: DifferentialResults;

await describeBed(incusBed, 'incus commands give the same output against the later revision of the simulator as against Incus 6.0', () => {
  beforeAll(async () => {
    t = await startSimRemote({ revision: 'later' }, 'incus');
    const add = await t.lxc.run(['remote', 'add', 'sim', t.sim.controls.issueToken('incus-differential')]);
    if (add.code !== 0) throw new Error(`incus remote add exited ${add.code}: ${add.stderr}`);
    results = await runDifferential(t, scenario, names, 'incus');
  }, 10 * 60_000);

  afterAll(async () => {
    for (const name of [...Object.values(names), `${names.n}-pub`, `${names.n}-bad`, `${names.n}-renamed`])
      await t?.lxc.run(['delete', '--force', `local:${name}`]);
    await t?.lxc.run(['image', 'delete', `local:${names.n}-img`]);
    await t?.lxc.run(['profile', 'delete', `local:${names.n}-prof`]);
    await t?.lxc.run(['project', 'delete', `local:${names.n}-proj`]);
    await t?.close();
  });

  for (const [i, step] of scenario.entries()) {
    it(`${i + 1}. ${titleOf(step, 'incus')}`, () => {
      const r = results.get(`${i}`);
      expect(r?.sim).toEqual(r?.real);
    });
  }
});
