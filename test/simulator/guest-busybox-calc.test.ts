import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InstanceClient } from '../../src/client/client.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { fastTimings } from './sim-client.js';

/**
 * The guest's bc and dc on input nested deeper than any script writes (issue #41 item 5): parsed
 * and run without recursion in the simulator, so deep input cannot overflow the process's stack.
 * Their output, messages and exit codes are held to LXD 5.0.2 by the lxc differential's busybox
 * lines (test/lxc-client/differential-scenario.ts).
 */
let sim: RunningSimulator;
let client: InstanceClient;

beforeAll(async () => {
  sim = await startSimulator({ timings: fastTimings });
  client = new InstanceClient({ kind: 'unix', socketPath: sim.socketPath!, url: `unix://${sim.socketPath}` });
  sim.controls.addInstance({ name: 'calc', status: 'Running', config: { 'raw.lxc': 'lxc.init.cmd=/sbin/testinit' } });
});

afterAll(async () => {
  await client?.close();
  await sim?.stop();
});

const sh = async (script: string) => (await client.exec('calc', { command: ['sh', '-c', script] })).wait({ timeoutMs: 60_000 });
const nest = (open: string, inner: string, close: string, depth = 20_000): string => open.repeat(depth) + inner + close.repeat(depth);

describe('the guest’s calculators', () => {
  it('bc parses parentheses, subscripts, calls and blocks 20,000 deep', async () => {
    const program = [
      nest('(', '1', ')'),
      nest('a[', '0', ']'),
      `define f(x) { return (x); }; ${nest('f(', '2', ')')}`,
      nest('{', '3', '}'),
      nest('if (1) ', '4', ''),
      nest('- ', '5', '', 20_001),
    ].join('\n');
    const res = await sh(`echo '${program}' | bc`);
    expect(res.stderr).toBe('');
    expect(res.stdout).toBe('1\n0\n2\n3\n4\n-5\n');
  });

  it('dc runs a macro that calls itself 20,000 deep', async () => {
    const res = await sh('dc -e "[d 1 - d 0 <a] sa 20000 la x z p"');
    expect(res.stderr).toBe('');
    expect(res.stdout).toBe('20001\n');
  });

  it('busybox --list names bc and dc', async () => {
    const listed = (await sh('busybox --list')).stdout.split('\n');
    expect(listed).toEqual(expect.arrayContaining(['bc', 'dc']));
  });

  it('an unclosed nesting is refused as busybox refuses it', async () => {
    const res = await sh(`echo '${nest('(', '1', '', 5000)}' | bc; echo $?`);
    expect(res.stdout).toBe('1\n');
    expect(res.stderr).toBe("bc: bad expression at ''\n");
  });
});
