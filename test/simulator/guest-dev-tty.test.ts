import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGuestShell, type GuestShell } from './sim-client.js';

/**
 * An exec without a terminal gives its command no controlling terminal: `/dev/tty` opens for no one
 * (ENXIO), root included, and the shell's redirections and `cat` say so in busybox's words. Each answer below is
 * LXD 5.0.2's (`lxc exec` without `-t`).
 */
let guest: GuestShell;

beforeAll(async () => {
  guest = await startGuestShell('devtty');
});

afterAll(async () => {
  await guest.close();
});

describe('/dev/tty in an exec without a terminal', () => {
  it.each([
    ['echo hi > /dev/tty; echo rc=$?', 'rc=1\n', "sh: can't create /dev/tty: No such device or address\n"],
    ['echo hi >> /dev/tty; echo rc=$?', 'rc=1\n', "sh: can't create /dev/tty: No such device or address\n"],
    ['read x < /dev/tty; echo rc=$?', 'rc=1\n', "sh: can't open /dev/tty: No such device or address\n"],
    ['(exec 1>/dev/tty; echo hi); echo rc=$?', 'rc=1\n', "sh: can't create /dev/tty: No such device or address\n"],
    ['(exec 3<>/dev/tty); echo rc=$?', 'rc=1\n', "sh: can't create /dev/tty: No such device or address\n"],
    ['cat /dev/tty; echo rc=$?', 'rc=1\n', "cat: can't open '/dev/tty': No such device or address\n"],
    ['head /dev/tty; echo rc=$?', 'rc=1\n', 'head: /dev/tty: No such device or address\n'],
    ['wc /dev/tty; echo rc=$?', 'rc=1\n', 'wc: /dev/tty: No such device or address\n'],
    ['grep a /dev/tty; echo rc=$?', 'rc=2\n', 'grep: /dev/tty: No such device or address\n'],
    ['od /dev/tty; echo rc=$?', 'rc=1\n', 'od: /dev/tty: No such device or address\n'],
    ['sort /dev/tty; echo rc=$?', 'rc=2\n', 'sort: /dev/tty: No such device or address\n'],
    ['cut -c1 /dev/tty; echo rc=$?', 'rc=1\n', 'cut: /dev/tty: No such device or address\n'],
    ['sed p /dev/tty; echo rc=$?', 'rc=1\n', 'sed: /dev/tty: No such device or address\n'],
    ['cat -n /dev/tty; echo rc=$?', 'rc=1\n', 'cat: /dev/tty: No such device or address\n'],
    ['md5sum /dev/tty; echo rc=$?', 'rc=1\n', "md5sum: can't open '/dev/tty': No such device or address\n"],
    ['sha1sum /dev/tty; echo rc=$?', 'rc=1\n', "sha1sum: can't open '/dev/tty': No such device or address\n"],
    ['cp /dev/tty /tmp/t; echo rc=$?', 'rc=1\n', "cp: can't open '/dev/tty': No such device or address\n"],
    ['uniq /dev/tty; echo rc=$?', 'rc=1\n', "uniq: can't open '/dev/tty': No such device or address\n"],
    ['gzip -c /dev/tty; echo rc=$?', 'rc=1\n', "gzip: can't open '/dev/tty': No such device or address\n"],
    ['dd if=/dev/tty; echo rc=$?', 'rc=1\n', "dd: can't open '/dev/tty': No such device or address\n"],
    ['xxd /dev/tty; echo rc=$?', 'rc=1\n', 'xxd: /dev/tty: No such device or address\n'],
    ['hexdump /dev/tty; echo rc=$?', 'rc=1\n', 'hexdump: /dev/tty: No such device or address\n'],
    ['base64 /dev/tty; echo rc=$?', 'rc=1\n', 'base64: /dev/tty: No such device or address\n'],
    ['awk 1 /dev/tty; echo rc=$?', 'rc=1\n', 'awk: /dev/tty: No such device or address\n'],
    ['nl /dev/tty; echo rc=$?', 'rc=1\n', 'nl: /dev/tty: No such device or address\n'],
    ['cmp /dev/tty /dev/null; echo rc=$?', 'rc=2\n', 'cmp: /dev/tty: No such device or address\n'],
    ['tac /dev/tty; echo rc=$?', 'rc=1\n', 'tac: /dev/tty: No such device or address\n'],
    ['strings /dev/tty; echo rc=$?', 'rc=1\n', 'strings: /dev/tty: No such device or address\n'],
    ['rev /dev/tty; echo rc=$?', 'rc=1\n', 'rev: /dev/tty: No such device or address\n'],
    ['paste /dev/tty; echo rc=$?', 'rc=1\n', 'paste: /dev/tty: No such device or address\n'],
    ['fold /dev/tty; echo rc=$?', 'rc=1\n', 'fold: /dev/tty: No such device or address\n'],
    ['echo x | tee /dev/tty; echo rc=$?', 'x\nrc=1\n', 'tee: /dev/tty: No such device or address\n'],
    ['tail /dev/tty; echo rc=$?', 'rc=1\n', "tail: can't open '/dev/tty': No such device or address\ntail: no files\n"],
    ['tr a b < /dev/tty; echo rc=$?', 'rc=1\n', "sh: can't open /dev/tty: No such device or address\n"],
    ['test -e /dev/tty; echo $?; test -w /dev/tty; echo $?; test -c /dev/tty; echo $?', '0\n0\n0\n', ''],
  ])('%s', async (script, stdout, stderr) => {
    const r = await guest.sh(script);
    expect({ stdout: r.stdout, stderr: r.stderr, exitCode: r.exitCode }).toEqual({ stdout, stderr, exitCode: 0 });
  });

  it('is not made by a write that was refused', async () => {
    await guest.sh('echo hi > /dev/tty');
    const r = await guest.sh('cat /dev/tty; echo rc=$?');
    expect(r.stdout).toBe('rc=1\n');
  });
});
