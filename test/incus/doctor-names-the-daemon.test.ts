import { expect, it } from 'vitest';
import { INCUS_SOCKET, describeIncus } from '../support/incus-bed.js';
import { describeLxd, lxdSocketPath } from '../support/lxd-bed.js';
import { redisUrl } from '../support/redis.js';
import { runReflex } from '../support/reflex-process.js';

/** `reflex doctor` names the daemon behind a target and warns about the differences that matter to rules. */
const doctor = (socket: string) => runReflex(['doctor', '--redis', redisUrl(), '--target', `unix://${socket}`, '--rules', 'rules']);

await describeIncus('reflex doctor against real Incus', () => {
  it('names Incus and its version, and warns about boot.autorestart and guest reboots', async () => {
    const res = await doctor(INCUS_SOCKET);
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^ok\s+daemon\s+Incus 6\.\d+\.\d+$/m);
    expect(res.stdout).toMatch(/^warn\s+daemon\s+boot\.autorestart=true makes Incus restart a crashed instance itself/m);
    expect(res.stdout).toMatch(/^warn\s+daemon\s+a guest reboot is reported only as instance-restarted/m);
    expect(res.stdout).not.toMatch(/instance-ready/);
  }, 60_000);
});

await describeLxd('reflex doctor against real LXD 5.0', () => {
  it('names LXD and its version, and warns that it has no instance-ready and no boot.autorestart', async () => {
    const res = await doctor(lxdSocketPath()!);
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^ok\s+daemon\s+LXD 5\.0\.\d+$/m);
    expect(res.stdout).toMatch(/^warn\s+daemon\s+no instance-ready event or Ready \(113\) status on LXD 5\.0\.\d+/m);
    expect(res.stdout).toMatch(/^warn\s+daemon\s+LXD has no boot\.autorestart/m);
    expect(res.stdout).not.toMatch(/Incus restart/);
  }, 60_000);
});
