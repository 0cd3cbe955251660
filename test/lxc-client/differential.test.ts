import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeLxd } from '../support/lxd-bed.js';
import type { LxcResult } from '../support/lxc-cli.js';
import { argsFor, stepsFor, titleOf, type Names } from './differential-scenario.js';
import { normaliseOutput } from './normalise.js';
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
const results = new Map<string, { real: LxcResult; sim: LxcResult }>();

function normalised(r: LxcResult, remote: string, keep?: (line: string) => boolean, transform?: (text: string) => string): LxcResult {
  const tidy = (s: string): string => {
    const text = normaliseOutput(s, { remote });
    const kept = keep ? text.split('\n').filter(keep).join('\n') : text;
    return transform ? transform(kept) : kept;
  };
  return { stdout: tidy(r.stdout), stderr: tidy(r.stderr), code: r.code };
}

await describeLxd('lxc commands give the same output against the simulator as against LXD 5.0.2', () => {
  beforeAll(async () => {
    t = await startSimRemote({ trustPassword: 'diff' });
    await t.lxc.ok(['remote', 'add', 'sim', t.sim.httpsUrl!, '--password', 'diff', '--accept-certificate']);
    // The test bed's default profile has a root disk only (no network).
    await t.lxc.ok(['profile', 'device', 'remove', 'sim:default', 'eth0']);
    // Nor a custom volume: the simulator's `data` goes (through the volume API it serves).
    await t.lxc.ok(['storage', 'volume', 'delete', 'sim:default', 'data']);
    for (const [remote, side] of [
      ['local', 'real'],
      ['sim', 'sim'],
    ] as const) {
      for (const [i, step] of scenario.entries()) {
        const res = await t.lxc.run(argsFor(step, remote, names), { timeoutMs: 60_000 });
        const key = `${i}`;
        const entry = results.get(key) ?? ({} as { real: LxcResult; sim: LxcResult });
        entry[side] = normalised(res, remote, step.keepLines ? (l) => step.keepLines!(l, names) : undefined, step.transform);
        results.set(key, entry);
        if (process.env.REFLEX_DIFF_DEBUG) process.stderr.write(`[${side}] ${titleOf(step)} → ${res.code}\n${res.stdout}${res.stderr}\n`);
      }
    }
  }, 10 * 60_000);

  afterAll(async () => {
    for (const name of Object.values(names)) await t?.lxc.run(['delete', '--force', `local:${name}`]);
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
