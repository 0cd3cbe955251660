import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGuestShell, type GuestShell } from './sim-client.js';

/**
 * busybox's du in the guest. The expected answers are LXD 5.0.2's busybox 1.35 (the reflex-busybox
 * image), as root and as `--user 1000 --group 1000`; the directory listed in creation order (the
 * beds' ext4 lists in hash order, so the steps give each file one name or compare totals).
 */
let guest: GuestShell;

const asUser = async (script: string) =>
  (await guest.client.exec('u', { command: ['sh', '-c', script], user: 1000, group: 1000, cwd: '/tmp' })).wait({ timeoutMs: 20_000 });

beforeAll(async () => {
  guest = await startGuestShell('u');
  const setUp = await guest.sh(
    'mkdir -p /tmp/u/d; cd /tmp/u; echo aaaa > d/a; ln d/a d/b; head -c 10000 /dev/zero > d/big; ln d/big d/big2; ' +
      'mkdir d/no; echo x > d/no/x; chmod 700 d/no',
  );
  expect(setUp.exitCode).toBe(0);
});
afterAll(() => guest.close());

describe('du', () => {
  it('counts a file with several names once, over all its operands', async () => {
    const res = await guest.sh('cd /tmp/u; du -s d; du d/a d/b; du -a d/no; du -c d d; du -sh d');
    expect(res.stdout).toBe('28\td\n4\td/a\n4\td/no/x\n8\td/no\n8\td/no\n28\td\n28\ttotal\n28.0K\td\n');
    expect(res.exitCode).toBe(0);
  });

  it('counts the rest of a tree holding a directory the user may not list, and says so', async () => {
    const res = await asUser('cd /tmp/u; du -s d; echo $?; du nosuch; echo $?');
    expect(res.stdout).toBe('24\td\n1\n1\n');
    expect(res.stderr).toBe("du: can't open 'd/no': Permission denied\ndu: nosuch: No such file or directory\n");
  });

  it('prints sizes as busybox does: -m rounds up, -b counts bytes, -d limits the depth', async () => {
    const res = await guest.sh('mkdir -p /tmp/u/q/s; cd /tmp/u; echo x > q/s/x; printf 12345 > q/a; du -m q; du -b q; du -d 0 q; du -bh q');
    expect(res.stdout).toBe('1\tq/s\n1\tq\n4098\tq/s\n8199\tq\n16\tq\n4.0K\tq/s\n8.0K\tq\n');
  });
});
