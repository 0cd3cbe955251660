import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GuestFs } from '../../src/simulator/guest/guest-fs.js';
import { layOut } from '../../src/simulator/guest/guest-layout.js';
import { startGuestShell, type GuestShell } from './sim-client.js';

/**
 * The guest's programs as the busybox image of the LXD 5.0.2 test bed has them (scripts/testbed-image.sh:
 * Debian 12's busybox-static 1.35 with a link per applet): the links in /bin, /usr/bin, /sbin and
 * /usr/sbin, /bin/busybox, how ash (standalone applets) finds and names them, and a link or a
 * script of the user's. The expected answers were recorded there with `lxc exec -- sh -c …`.
 */
let guest: GuestShell;

const asUser = async (script: string) =>
  (await guest.client.exec('b', { command: ['sh', '-c', script], user: 1000, group: 1000, cwd: '/tmp' })).wait({ timeoutMs: 20_000 });

beforeAll(async () => {
  guest = await startGuestShell('b');
});
afterAll(() => guest.close());

describe('the program directories', () => {
  it('hold a link to /bin/busybox for each applet where the bed has one, and nothing else', async () => {
    const r = await guest.sh(
      'ls -l /bin | head -3; for d in /bin /usr/bin /sbin /usr/sbin; do ls $d | wc -l; done; ls /sbin | head -3; ls -l /bin/busybox | tr -s " " | cut -d" " -f1,5; readlink /bin/sh; readlink /usr/bin/[; test -x /bin/sh; echo $?',
    );
    expect(r.stdout.replace(/\w{3} [ \d]\d \d\d:\d\d/g, 'DATE')).toBe(
      [
        'total 1936',
        'lrwxrwxrwx    1 root     root            12 DATE arch -> /bin/busybox',
        'lrwxrwxrwx    1 root     root            12 DATE ash -> /bin/busybox',
        '77',
        '121',
        '52',
        '19',
        'acpid',
        'adjtimex',
        'arp',
        '-rwxr-xr-x 1982256',
        '/bin/busybox',
        '/bin/busybox',
        '0',
        '',
      ].join('\n'),
    );
  });

  it("show none of the shell's builtins nor the simulator's helpers", async () => {
    const r = await guest.sh(
      'ls /bin /usr/bin | grep -c -e "^__" -e "^alias$" -e "^umask$"; find / -name "__*" | wc -l; stat -c "%A %s %N" /bin/sh; cat /bin/busybox | head -c 4 | od -c | head -1',
    );
    expect(r.stdout).toBe("0\n0\nlrwxrwxrwx 12 '/bin/sh' -> '/bin/busybox'\n0000000 177   E   L   F\n");
  });

  it('date the links when the image made them, as /bin/busybox (on the bed within the same second)', async () => {
    const r = await guest.sh('stat -c "%Y" /bin/sh /linuxrc /usr/sbin/httpd /bin/busybox | uniq | wc -l');
    expect(r.stdout).toBe('1\n');
  });

  it('busybox --list names the 269 applets of the bed', async () => {
    const r = await guest.sh('busybox --list | wc -l; busybox --list | head -3');
    expect(r.stdout).toBe('269\n[\n[[\nacpid\n');
  });
});

describe('finding a program', () => {
  it('names an applet after itself, a builtin as a builtin, and says what is not found on stdout with 127', async () => {
    const r = await guest.sh(
      'which ls; command -v ls; type ls; type echo; type nosuch; echo rc=$?; command -v nosuch; echo rc=$?; command -V nosuch; echo rc=$?; which echo; which test; type ifconfig; which ifconfig; type busybox',
    );
    expect(r.stdout).toBe(
      [
        '/bin/ls',
        'ls',
        'ls is ls',
        'echo is a shell builtin',
        'nosuch: not found',
        'rc=127',
        'rc=127',
        'nosuch: not found',
        'rc=127',
        '/bin/echo',
        '/usr/bin/test',
        'ifconfig is ifconfig',
        '/sbin/ifconfig',
        'busybox is busybox',
        '',
      ].join('\n'),
    );
    expect(r.stderr).toBe('');
  });

  it('runs a link to busybox as the applet its name says', async () => {
    const r = await guest.sh(
      'ln -s /bin/busybox /tmp/x; /tmp/x; echo "rc=$?"; ln -s /bin/busybox /tmp/ls; /tmp/ls -d /tmp; cd /tmp && ./ls -d /; PATH=/tmp x; echo "rc=$?"; busybox ls -d /; busybox nosuch; echo "rc=$?"; /bin/busybox ls -d /tmp; /usr/bin/env ls -d /',
    );
    expect(r.stdout).toBe('rc=127\n/tmp\n/\nrc=127\n/\nrc=127\n/tmp\n/\n');
    expect(r.stderr).toBe('x: applet not found\nx: applet not found\nnosuch: applet not found\n');
  });

  it('runs an applet by name after its link is gone, and a script put in its place by path only', async () => {
    await guest.sh('cp /bin/busybox /tmp/bb-copy; rm /bin/ls');
    const gone = await guest.sh('ls -d /; /bin/ls; echo "rc=$?"; which ls; echo "rc=$?"; type ls; env ls -d /');
    expect(gone.stdout).toBe('/\nrc=127\nrc=1\nls is ls\n/\n');
    expect(gone.stderr).toBe('sh: /bin/ls: not found\n');
    const mine = await guest.sh(
      'printf "#!/bin/sh\\necho mine \\$0 \\$*\\n" > /bin/ls; ls -d /; /bin/ls a b; echo "rc=$?"; chmod 755 /bin/ls; /bin/ls a b; echo "rc=$?"; which ls; type ls',
    );
    expect(mine.stdout).toBe('/\nrc=126\nmine /bin/ls a b\nrc=0\n/bin/ls\nls is ls\n');
    expect(mine.stderr).toBe('sh: /bin/ls: Permission denied\n');
    await guest.sh('rm /bin/ls; ln -s /bin/busybox /bin/ls');
  });

  it("runs the user's own script by its path or on PATH, with the path as $0", async () => {
    const r = await guest.sh(
      'printf "#!/bin/sh\\necho hi \\$0\\n" > /tmp/p; /tmp/p; echo "rc=$?"; chmod +x /tmp/p; /tmp/p; cd /tmp; p; echo rc=$?; PATH=/tmp:$PATH; p; which p; type p; command -v p',
    );
    expect(r.stdout).toBe('rc=126\nhi /tmp/p\nrc=127\nhi /tmp/p\n/tmp/p\np is /tmp/p\n/tmp/p\n');
    expect(r.stderr).toBe('sh: /tmp/p: Permission denied\nsh: p: not found\n');
  });

  it('is the same for a user other than root', async () => {
    const r = await asUser(
      'ls -l /bin/sh | cut -c1-30; /bin/busybox ls -d /; ln -s /bin/busybox /tmp/y; /tmp/y; echo rc=$?; printf "#!/bin/sh\\necho u\\n" > /tmp/q; chmod 700 /tmp/q; /tmp/q',
    );
    expect(r.stdout).toBe('lrwxrwxrwx    1 root     root \n/\nrc=127\nu\n');
    expect(r.stderr).toBe('y: applet not found\n');
  });

  it("runs a script a user may run but not read as its interpreter does (can't open, 2), and a link to busybox without moving its atime", async () => {
    const r = await asUser(
      'printf "#!/bin/sh\\necho u\\n" > /tmp/q1; chmod 100 /tmp/q1; /tmp/q1; echo rc=$?; a=$(stat -c %X /bin/busybox); /bin/ls -d /; ls -d /; [ "$a" = "$(stat -c %X /bin/busybox)" ] && echo same',
    );
    expect(r.stdout).toBe('rc=2\n/\n/\nsame\n');
    expect(r.stderr).toBe("/bin/sh: can't open '/tmp/q1': Permission denied\n");
  });

  it("runs test, [ and [[ by their links as the shell's test", async () => {
    const r = await guest.sh(
      '/usr/bin/test 1 = 1; echo $?; /usr/bin/[ 1 = 2 ]; echo $?; /usr/bin/[[ 1 = 1 ]]; echo $?; /usr/bin/[[ 1 = 1; echo $?; /usr/bin/[ 1 = 1; echo $?; env test -d /tmp; echo $?; cd /tmp; /usr/bin/test -f nosuch; echo $?; type test; command -v [',
    );
    expect(r.stdout).toBe('0\n1\n0\n2\n2\n0\n1\ntest is a shell builtin\n[\n');
    expect(r.stderr).toBe('[[: missing ]]\n[: missing ]\n');
  });

  it('says so for an applet of the bed the simulator does not run', async () => {
    const r = await guest.sh('ifup; echo rc=$?; /sbin/ifup; echo rc=$?; type ifup');
    expect(r.stdout).toBe('rc=127\nrc=127\nifup is ifup\n');
    expect(r.stderr).toBe('ifup: applet not simulated by the Reflex simulator\n'.repeat(2));
  });
});

describe("a copy of the guest's filesystem (snapshot, restore, lxc copy)", () => {
  it('keeps the mtime of each symlink', async () => {
    const { InMemoryFs } = await import('just-bash');
    const memory = new InMemoryFs();
    await layOut(memory, 'busybox');
    await memory.symlink('/etc', '/tmp/mine');
    await new Promise((resolve) => setTimeout(resolve, 20));
    const copy = await new GuestFs(memory).clone();
    for (const path of ['/bin/ls', '/tmp/mine']) expect((await copy.memory.lstat(path)).mtime).toEqual((await memory.lstat(path)).mtime);
  });
});

describe('which', () => {
  it('finds executable regular files only, by path or on PATH (an empty entry is the current directory), and gives usage for nothing', async () => {
    const r = await guest.sh(
      'cd /tmp; touch z; mkdir -p d/zz; PATH=/tmp:$PATH which z; echo rc=$?; which /tmp/z; echo rc=$?; chmod +x z; PATH=/tmp:$PATH which z; echo rc=$?; which ./z; echo rc=$?; which; echo rc=$?; which -a sh ls; PATH=/tmp:/tmp/d which zz; echo rc=$?; which nosuch ls; echo rc=$?; PATH= which z; (unset PATH; which ls); cd /; PATH=tmp which z',
    );
    expect(r.stdout).toBe(
      ['rc=1', 'rc=1', '/tmp/z', 'rc=0', './z', 'rc=0', 'rc=1', '/bin/sh', '/bin/ls', 'rc=1', '/bin/ls', 'rc=1', './z', '/bin/ls', 'tmp/z', ''].join(
        '\n',
      ),
    );
    expect(r.stderr).toMatch(/^BusyBox v1\.35\.0 .*\n\nUsage: which \[-a\] COMMAND\.\.\.\n\nLocate COMMAND\n\n\t-a\tShow all matches\n$/);
  });
});

describe('a Debian image', () => {
  it('has its programs as files in /usr/bin, each reached from /bin too (merged /usr); no probe bed, so as Debian 12 lays them out', async () => {
    const deb = await startGuestShell('deb', { 'image.os': 'Debian' });
    try {
      const r = await deb.sh('which ls; ls -l /usr/bin/ls | cut -c1-10; readlink /bin/sh; /bin/sh -c "echo hi"; /usr/bin/env ls -d /tmp');
      expect(r.stdout).toBe('/usr/bin/ls\n-rwxr-xr-x\n/usr/bin/sh\nhi\n/tmp\n');
      expect(r.stderr).toBe('');
    } finally {
      await deb.close();
    }
  });
});
