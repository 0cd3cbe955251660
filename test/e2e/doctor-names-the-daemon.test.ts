import { expect, it } from 'vitest';
import { describeEachBed } from '../support/daemon-bed.js';
import { redisUrl } from '../support/redis.js';
import { runReflex } from '../support/reflex-process.js';

/** `reflex doctor` names the daemon behind a target and warns about the differences that matter to rules. */
const expected = {
  lxd: {
    title: 'names LXD and its version, and warns that it has no instance-ready and no boot.autorestart',
    says: [
      /^ok\s+daemon\s+LXD 5\.0\.\d+$/m,
      /^warn\s+daemon\s+no instance-ready event or Ready \(113\) status on LXD 5\.0\.\d+/m,
      /^warn\s+daemon\s+LXD has no boot\.autorestart/m,
    ],
    never: /Incus restart/,
  },
  incus: {
    title: 'names Incus and its version, and warns about boot.autorestart and guest reboots',
    says: [
      /^ok\s+daemon\s+Incus 6\.\d+\.\d+$/m,
      /^warn\s+daemon\s+boot\.autorestart=true makes Incus restart a crashed instance itself/m,
      /^warn\s+daemon\s+a guest reboot is reported only as instance-restarted/m,
    ],
    never: /instance-ready/,
  },
};

await describeEachBed('reflex doctor against a real daemon', (bed) => {
  const { title, says, never } = expected[bed.kind];
  it(
    title,
    async () => {
      const res = await runReflex(['doctor', '--redis', redisUrl(), '--target', bed.target, '--rules', 'rules']);
      expect(res.code, res.stdout + res.stderr).toBe(0);
      for (const line of says) expect(res.stdout).toMatch(line);
      expect(res.stdout).not.toMatch(never);
    },
    60_000,
  );
});
