import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InstanceClient } from '../../src/client/client.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { fastTimings } from './sim-client.js';

/**
 * The guest's package programs (dpkg, dpkg-deb, rpm, rpm2cpio; issue #41 item 5) on the simulator
 * alone, for what the lxc differential's busybox lines (which hold their output to LXD 5.0.2)
 * cannot show there: what a user other than root extracts, and `busybox --list`.
 */
let sim: RunningSimulator;
let client: InstanceClient;

beforeAll(async () => {
  sim = await startSimulator({ timings: fastTimings });
  client = new InstanceClient({ kind: 'unix', socketPath: sim.socketPath!, url: `unix://${sim.socketPath}` });
  sim.controls.addInstance({ name: 'pkg', status: 'Running', config: { 'raw.lxc': 'lxc.init.cmd=/sbin/testinit' } });
});

afterAll(async () => {
  await client?.close();
  await sim?.stop();
});

const sh = async (script: string, user?: number) =>
  (await client.exec('pkg', { command: ['sh', '-c', script], ...(user === undefined ? {} : { user, group: user }) })).wait({ timeoutMs: 20_000 });

const fixture = (name: string): string => readFileSync(new URL(`../fixtures/packages/${name}`, import.meta.url)).toString('base64');

describe('the guest’s package programs', () => {
  it('busybox --list names dpkg, dpkg-deb, rpm and rpm2cpio', async () => {
    const listed = (await sh('busybox --list')).stdout.split('\n');
    for (const name of ['dpkg', 'dpkg-deb', 'rpm', 'rpm2cpio']) expect(listed).toContain(name);
  });

  it('what a user other than root extracts from a .deb or an rpm is its own, with the archive’s modes', async () => {
    const res = await sh(
      `mkdir -p /tmp/u && cd /tmp/u && echo ${fixture('hello_1.0-1_all.deb')} | base64 -d > h.deb && ` +
        `echo ${fixture('hello-1.0-1.noarch.rpm')} | base64 -d > h.rpm && dpkg-deb -x h.deb x && dpkg-deb -e h.deb && ` +
        'mkdir r && cd r && rpm2cpio ../h.rpm | cpio -idm 2>/dev/null && cd .. && ' +
        'stat -c "%u %a %n" x/usr/bin/hello x/etc/hello.conf DEBIAN/postinst r/usr/bin/hello',
      1000,
    );
    expect(res.stderr).toBe('');
    expect(res.stdout).toBe('1000 755 x/usr/bin/hello\n1000 644 x/etc/hello.conf\n1000 755 DEBIAN/postinst\n1000 755 r/usr/bin/hello\n');
  });
});
