import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeLxcClient, startSimRemote, type SimRemote } from './sim-remote.js';

let t: SimRemote;

describeLxcClient('lxc info --show-log against reflex sim', () => {
  beforeAll(async () => {
    t = await startSimRemote({ trustPassword: 'pw' });
    await t.lxc.ok(['remote', 'add', 'sim', t.sim.httpsUrl!, '--password', 'pw', '--accept-certificate']);
  });
  afterAll(async () => t?.close());

  it('prints the liblxc log of a started container after its info', async () => {
    await t.lxc.ok(['launch', 'sim:busybox', 'sim:c1']);
    const out = await t.lxc.ok(['info', 'sim:c1', '--show-log']);
    expect(out).toMatch(/^Name: c1\nStatus: RUNNING\n/);
    expect(out).toMatch(/\nLog:\n\nlxc c1 \d{14}\.000 WARN {5}cgfsng - .*memory\.oom\.group.*\n/);
  });

  it('prints an empty log for a container never started, as the daemon does', async () => {
    await t.lxc.ok(['init', 'sim:busybox', 'sim:c2']);
    const res = await t.lxc.run(['info', 'sim:c2', '--show-log']);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/\nLog:\n\n\n$/);
  });
});
