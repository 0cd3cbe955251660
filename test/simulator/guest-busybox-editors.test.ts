import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InstanceClient } from '../../src/client/client.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { fastTimings } from './sim-client.js';

/**
 * busybox's ed and mim in the guest (issue #41 item 5), on the simulator alone: what the lxc
 * differential's lines cannot show, as they run as root and compare text. The refusals are the
 * ones busybox 1.35 gives a user other than root on LXD 5.0.2 (`lxc exec --user 1000`).
 */
let sim: RunningSimulator;
let client: InstanceClient;

beforeAll(async () => {
  sim = await startSimulator({ timings: fastTimings });
  client = new InstanceClient({ kind: 'unix', socketPath: sim.socketPath!, url: `unix://${sim.socketPath}` });
  sim.controls.addInstance({ name: 'ed', status: 'Running', config: { 'raw.lxc': 'lxc.init.cmd=/sbin/testinit' } });
});

afterAll(async () => {
  await client?.close();
  await sim?.stop();
});

const sh = async (script: string, user?: number) =>
  (await client.exec('ed', { command: ['sh', '-c', script], ...(user === undefined ? {} : { user, group: user }) })).wait({ timeoutMs: 20_000 });

describe('the guest’s ed and mim', () => {
  it('ed keeps every byte of a line, NUL and bytes past ASCII included', async () => {
    const res = await sh(
      `printf '\\000\\001\\377\\200x\\ny\\n' > /tmp/bin; printf ',s/y/z/\\nw\\n' | ed /tmp/bin; od -An -c /tmp/bin; ` +
        `printf 'a\\n\\351t\\303\\251\\n.\\nw /tmp/u\\n' | ed; od -An -c /tmp/u`,
    );
    expect(res.stderr).toBe('');
    expect(res.stdout).toBe('8\n8\n  \\0 001 377 200   x  \\n   z  \\n\n5\n 351   t 303 251  \\n\n');
  });

  it('a user other than root is refused what it may not read or write', async () => {
    const res = await sh(
      `cd /tmp; printf 'a:\\n\\techo a\\n' > M0; chmod 0 M0; mim -f M0; echo rc=$?; printf 'p\\n' | ed M0; echo rc=$?; ` +
        `mkdir -p /tmp/ro; chmod 555 /tmp/ro; printf 'a\\nx\\n.\\nw /tmp/ro/x\\nw /tmp/mine\\n' | ed; stat -c '%u %a' /tmp/mine`,
      1000,
    );
    expect(res.stdout).toBe('rc=1\nrc=0\n2\n1000 644\n');
    expect(res.stderr).toBe("mim: line 7: can't open M0: Permission denied\ned: M0: Permission denied\ned: /tmp/ro/x: Permission denied\n");
  });
});
