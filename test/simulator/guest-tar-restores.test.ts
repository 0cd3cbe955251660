import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGuestShell, type GuestShell } from './sim-client.js';

/**
 * busybox's tar in the guest. The expected answers are LXD 5.0.2's busybox 1.35 (the reflex-busybox
 * image), as root and as `--user 1000 --group 1000`. The beds list a directory in ext4's hash order,
 * the guest in creation order: which name of a hard-linked pair is stored first differs, so the
 * listings here are of archives made here.
 */
let guest: GuestShell;

const asUser = async (script: string) =>
  (await guest.client.exec('t', { command: ['sh', '-c', script], user: 1000, group: 1000, cwd: '/tmp' })).wait({ timeoutMs: 20_000 });

/** Makes DIR/src: a 0640 file with a second name, a 0755 one, a 0750 directory holding a 0600 file, a symlink. */
const tree = (dir: string): string =>
  `mkdir -p ${dir}; cd ${dir}; mkdir src; echo a > src/a; echo b > src/b; chmod 640 src/a; chmod 755 src/b; ln src/a src/hl; ` +
  'mkdir src/sub; chmod 750 src/sub; echo s > src/sub/s; chmod 600 src/sub/s; ln -s a src/sym; tar cf ar.tar src';

beforeAll(async () => {
  guest = await startGuestShell('t');
});
afterAll(() => guest.close());

describe('tar', () => {
  it('stores symlinks and hard links as such and lists them as busybox does', async () => {
    const res = await guest.sh(`${tree('/tmp/t1')}; tar tvf ar.tar | sed 's/ 20[0-9-]* [0-9:]* / DATE /'`);
    expect(res.stdout).toBe(
      'drwxr-xr-x root/root         0 DATE src/\n-rw-r----- root/root         2 DATE src/a\n-rwxr-xr-x root/root         2 DATE src/b\n' +
        '-rw-r----- root/root         0 DATE src/hl -> src/a\ndrwxr-x--- root/root         0 DATE src/sub/\n' +
        '-rw------- root/root         2 DATE src/sub/s\nlrwxrwxrwx root/root         0 DATE src/sym -> a\n',
    );
  });

  it("restores the archive's modes and hard links: as they are for root, less the umask for another user", async () => {
    const root = await guest.sh(
      `${tree('/tmp/t2')}; mkdir x; cd x; umask 077; tar xf ../ar.tar; stat -c '%n %a %h' src src/a src/hl src/b src/sub src/sub/s; ` +
        '[ "$(stat -c %i src/a)" = "$(stat -c %i src/hl)" ] && echo linked; readlink src/sym',
    );
    expect(root.stdout).toBe('src 755 3\nsrc/a 640 2\nsrc/hl 640 2\nsrc/b 755 1\nsrc/sub 750 2\nsrc/sub/s 600 1\nlinked\na\n');
    const user = await asUser(`${tree('/tmp/t3')}; mkdir x; cd x; umask 077; tar xf ../ar.tar; stat -c '%n %a %h' src src/a src/b src/sub src/sub/s`);
    expect(user.stdout).toBe('src 700 3\nsrc/a 600 2\nsrc/b 700 1\nsrc/sub 700 2\nsrc/sub/s 600 1\n');
  });

  it('says what it cannot read or open in busybox words, and ends with status 1', async () => {
    const res = await asUser(
      'mkdir /tmp/t4; cd /tmp/t4; echo z > un; chmod 000 un; tar cf u.tar un; echo $?; tar tf u.tar; cp u.tar no.tar; chmod 000 no.tar; tar tf no.tar; echo $?; ' +
        'mkdir ud; echo q > ud/q; chmod 000 ud; tar cf ud.tar ud; echo $?; tar tf ud.tar; tar cf m.tar nosuch; echo $?; tar tf nosuch.tar; echo $?; ' +
        'mkdir ro; chmod 555 ro; cd ro; tar xf ../ud.tar; echo $?',
    );
    expect(res.stdout).toBe('1\n1\n1\nud/\n1\n1\n0\n');
    expect(res.stderr).toBe(
      "tar: can't open 'un': Permission denied\ntar: error exit delayed from previous errors\n" +
        "tar: can't open 'no.tar': Permission denied\n" +
        'tar: ud: Permission denied\ntar: error exit delayed from previous errors\n' +
        'tar: nosuch: No such file or directory\ntar: error exit delayed from previous errors\n' +
        "tar: can't open 'nosuch.tar': No such file or directory\n" +
        "tar: can't make dir ud: Permission denied\n",
    );
  });

  it('refuses what is not an archive and members it lacks, as busybox does', async () => {
    const res = await guest.sh(
      'mkdir /tmp/t5; cd /tmp/t5; : > e.tar; tar tf e.tar; echo $?; echo junk > j.tar; tar tf j.tar; echo $?; echo a > a; tar czf a.tgz a; tar tf a.tgz; echo $?; ' +
        'tar tzf a.tgz; tar cf a.tar a; tar xf a.tar nosuch; echo $?; tar cf e2.tar; echo $?; echo b > a; tar xkf a.tar; echo $?; tar xOf a.tar; tar xf a.tar -C nod; echo $?',
    );
    expect(res.stdout).toBe('1\n1\n1\na\n1\n1\n1\na\n1\n');
    expect(res.stderr).toBe(
      'tar: short read\ntar: short read\ntar: short read\ntar: nosuch: not found in archive\ntar: empty archive\n' +
        "tar: can't open 'a': File exists\ntar: can't change directory to 'nod': No such file or directory\n",
    );
  });

  it("reads its command line as busybox's getopt does", async () => {
    const res = await guest.sh(
      'cd /tmp; tar xf 2>&1 | head -1; tar --foo 2>&1 | head -1; tar --strip-components x; echo $?; tar -q 2>&1 | head -1; ' +
        'tar --help 2>/dev/null | wc -l; tar --help 2>&1 | wc -l; du --help 2>&1 | wc -l; du --foo 2>&1 | head -1; gzip --help; echo $?',
    );
    expect(res.stdout).toBe(
      "tar: option requires an argument -- 'f'\ntar: unrecognized option '--foo'\n1\ntar: invalid option -- 'q'\n0\n29\n18\n" +
        "du: unrecognized option '--foo'\n0\n",
    );
    expect(res.stderr).toBe(
      "tar: invalid number 'x'\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: gzip [-cfkdt] [FILE]...\n\n" +
        'Compress FILEs (or stdin)\n\n\t-d\tDecompress\n\t-c\tWrite to stdout\n\t-f\tForce\n\t-k\tKeep input files\n\t-t\tTest integrity\n',
    );
  });

  it('removes what is at a name before extracting it, and ends where it cannot', async () => {
    const root = await guest.sh(
      'mkdir /tmp/t6; cd /tmp/t6; echo a > a; ln a a2; tar cf /tmp/t6.tar a; echo b > a; tar xf /tmp/t6.tar; cat a a2; ' +
        'rm a; mkdir a; tar xf /tmp/t6.tar; echo $?; rmdir a; echo root > a; chmod 1777 /tmp/t6',
    );
    expect(root.stdout).toBe('a\nb\n1\n');
    expect(root.stderr).toBe("tar: can't remove old file a: Is a directory\n");
    const user = await asUser('cd /tmp/t6; tar xf /tmp/t6.tar; echo $?');
    expect(user.stdout).toBe('1\n');
    expect(user.stderr).toBe("tar: can't remove old file a: Operation not permitted\n");
  });
});
