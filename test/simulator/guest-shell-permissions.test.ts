import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGuestShell, type GuestShell } from './sim-client.js';

/**
 * The shell's own permission checks (`cd`, `test -r/-w/-x`, `sh FILE`, `. FILE`) for root and for a
 * user other than root. The expected answers are LXD 5.0.2's (busybox image), run there as
 * `lxc exec [--user 1000 --group 1000] -- sh -c …`.
 */
let guest: GuestShell;

const asUser = async (script: string) =>
  (await guest.client.exec('p', { command: ['sh', '-c', script], user: 1000, group: 1000, cwd: '/' })).wait({ timeoutMs: 20_000 });

beforeAll(async () => {
  guest = await startGuestShell('p');
  const setUp = await guest.sh(
    'mkdir -p /d7/sub /d6 /d1 /d3; chmod 700 /d7; chmod 600 /d6; chmod 711 /d1; chmod 300 /d3; echo hi > /d7/f; chmod 700 /root; ' +
      'cd /tmp; echo a > f000; chmod 000 f000; echo a > f700; chmod 700 f700; echo > f644; chmod 644 f644; echo > f604; chmod 604 f604; ' +
      'echo > f001; chmod 001 f001; echo > f010; chmod 010 f010; echo > f460; chmod 460 f460; chown 1000:1000 f460; ' +
      'echo > g046; chmod 046 g046; chgrp 1000 g046; mkdir d000 d700; chmod 000 d000; chmod 700 d700',
  );
  expect(setUp.exitCode).toBe(0);
});
afterAll(() => guest.close());

describe('cd', () => {
  it('refuses a user a directory it may not search, with busybox ash words and status 2', async () => {
    const res = await asUser(
      'cd /d7; echo "$? $PWD"; cd /d6; echo "$? $PWD"; cd /d1; echo "$? $PWD"; cd /d3; echo "$? $PWD"; cd /root; echo "$? $PWD"; cd /d7/sub; echo "$? $PWD"',
    );
    expect(res.stdout).toBe('2 /\n2 /\n0 /d1\n2 /d1\n2 /d1\n2 /d1\n');
    expect(res.stderr).toBe(
      "sh: cd: line 0: can't cd to /d7: Permission denied\n" +
        "sh: cd: line 0: can't cd to /d6: Permission denied\n" +
        "sh: cd: line 0: can't cd to /d3: Permission denied\n" +
        "sh: cd: line 0: can't cd to /root: Permission denied\n" +
        "sh: cd: line 0: can't cd to /d7/sub: Permission denied\n",
    );
    // Root enters them all.
    expect((await guest.sh('cd /d7 && cd /tmp/d000 && pwd')).stdout).toBe('/tmp/d000\n');
  });

  it('says why a path is no directory, by the line it is on (from 0 in `sh -c`), and resolves `..` by name as ash does', async () => {
    const res = await asUser(
      'echo $LINENO\ncd /nosuch\ncd /etc/passwd; cd /tmp; cd nosuch\ncd /d7/../tmp && echo "$PWD"; cd /etc/passwd/.. && echo "$PWD"',
    );
    expect(res.stdout).toBe('0\n/tmp\n/etc\n');
    expect(res.stderr).toBe(
      "sh: cd: line 1: can't cd to /nosuch: No such file or directory\n" +
        "sh: cd: line 2: can't cd to /etc/passwd: Not a directory\n" +
        "sh: cd: line 2: can't cd to nosuch: No such file or directory\n",
    );
    expect(res.exitCode).toBe(0);
    const through = await asUser('cd /etc/passwd/x; cd /nosuch/x');
    expect(through.stderr).toBe(
      "sh: cd: line 0: can't cd to /etc/passwd/x: Not a directory\nsh: cd: line 0: can't cd to /nosuch/x: No such file or directory\n",
    );
    // In a function, the line of the command; in a sourced file, its own lines from 1.
    const nested = await asUser('f() { cd /d7; }\nf; echo "cd /nosuch" > /tmp/l.sh; . /tmp/l.sh');
    expect(nested.stderr).toBe(
      "sh: cd: line 0: can't cd to /d7: Permission denied\nsh: cd: line 1: can't cd to /nosuch: No such file or directory\n",
    );
    expect(nested.exitCode).toBe(2);
  });
});

describe('test -r, -w, -x', () => {
  const table =
    'cd /tmp; for f in f000 f700 f644 f604 f001 f010 f460 g046 d000 d700 /d7/f /nosuch; do printf "%s " $f; ' +
    'test -r $f && printf r || printf -; [ -w $f ] && printf w || printf -; [[ -x $f ]] && printf x || printf -; echo; done';

  it("read the bits that apply to the user who asks (owner's, group's or others'), not the owner's", async () => {
    expect((await asUser(table)).stdout).toBe(
      'f000 ---\nf700 ---\nf644 r--\nf604 r--\nf001 --x\nf010 ---\nf460 r--\ng046 r--\nd000 ---\nd700 ---\n/d7/f ---\n/nosuch ---\n',
    );
  });

  it('let everyone read and write the devices a container opens to all (/dev/null), none execute them', async () => {
    expect((await asUser('test -r /dev/null; echo $?; test -w /dev/null; echo $?; test -x /dev/null; echo $?')).stdout).toBe('0\n0\n1\n');
  });

  it('give root read and write on anything, and execute where any x bit is set (a directory too)', async () => {
    expect((await guest.sh(table)).stdout).toBe(
      'f000 rw-\nf700 rwx\nf644 rw-\nf604 rw-\nf001 rwx\nf010 rwx\nf460 rw-\ng046 rw-\nd000 rw-\nd700 rwx\n/d7/f rw-\n/nosuch ---\n',
    );
  });
});

describe('a script the shell reads (sh FILE, . FILE)', () => {
  beforeAll(async () => {
    expect((await guest.sh('cd /tmp; echo "echo in-s; exit 3" > s600; chmod 600 s600; mkdir sd; echo "echo in" > s644')).exitCode).toBe(0);
  });

  it("`sh FILE` it cannot open: busybox's `can't open 'FILE'` and status 2; a directory reads as empty", async () => {
    const res = await asUser('sh /tmp/s600; echo $?; sh /tmp/nosuch; echo $?; sh /d7/f; echo $?; sh /tmp/sd; echo $?; sh /tmp/s644; echo $?');
    expect(res.stdout).toBe('2\n2\n2\n0\nin\n0\n');
    expect(res.stderr).toBe(
      "sh: can't open '/tmp/s600': Permission denied\nsh: can't open '/tmp/nosuch': No such file or directory\nsh: can't open '/d7/f': Permission denied\n",
    );
  });

  it("`sh FILE`'s own messages start with the file's name and say the line (from 1); a script from stdin names none", async () => {
    const res = await guest.sh(
      'printf "echo a\\nnosuch\\ncd /nosuch\\n/bin/nope\\n. /nosuch2\\necho after\\n" > /tmp/l2.sh; cd /tmp; sh l2.sh; echo "rc=$?"; sh < l2.sh; echo "rc=$?"',
    );
    expect(res.stdout).toBe('a\nrc=2\na\nrc=2\n');
    expect(res.stderr).toBe(
      'l2.sh: line 2: nosuch: not found\n' +
        "l2.sh: cd: line 3: can't cd to /nosuch: No such file or directory\n" +
        'l2.sh: line 4: /bin/nope: not found\n' +
        "l2.sh: .: line 5: can't open '/nosuch2': No such file or directory\n" +
        'sh: nosuch: not found\n' +
        "sh: cd: line 3: can't cd to /nosuch: No such file or directory\n" +
        'sh: /bin/nope: not found\n' +
        "sh: .: line 5: can't open '/nosuch2': No such file or directory\n",
    );
  });

  it('a shell names its messages after itself: sh -c NAME, a script run by its path, a sourced file inside sh -c', async () => {
    const res = await guest.sh(
      'printf "sh -c nosuch\\nsh -c \\"nosuch2\\" myname\\nnosuch3\\ncd /nosuch\\numask xyz\\n" > /tmp/l4.sh; chmod +x /tmp/l4.sh; cd /tmp; ./l4.sh; . ./l4.sh',
    );
    const once = (name: string, sourced: string) =>
      'sh: nosuch: not found\nmyname: line 0: nosuch2: not found\n' +
      `${name}: ${sourced}line 3: nosuch3: not found\n${name}: cd: line 4: can't cd to /nosuch: No such file or directory\n` +
      `${name}: umask: line 5: illegal mode: xyz\n`;
    expect(res).toMatchObject({ stderr: once('./l4.sh', '') + once('sh', './l4.sh: '), exitCode: 2 });
  });

  it('`. FILE` it cannot open ends the shell with 2 (a special builtin), a subshell only the subshell', async () => {
    for (const [script, stderr] of [
      ['. /tmp/s600; echo after', "sh: .: line 0: can't open '/tmp/s600': Permission denied\n"],
      ['echo\n. /tmp/nosuch; echo after', "sh: .: line 1: can't open '/tmp/nosuch': No such file or directory\n"],
      ['source /tmp/s600', "sh: source: line 0: can't open '/tmp/s600': Permission denied\n"],
      // A name without a slash is looked for on PATH only.
      ['cd /tmp; . s644; echo after', 'sh: .: line 0: s644: not found\n'],
    ]) {
      const res = await asUser(script!);
      expect(res).toMatchObject({ stdout: script!.startsWith('echo\n') ? '\n' : '', stderr, exitCode: 2 });
    }
    // Under `command` it is an ordinary command's failure: the shell goes on.
    const command = await asUser('command . /tmp/nosuch; echo "rc=$?"');
    expect(command).toMatchObject({ stdout: 'rc=2\n', stderr: "sh: .: line 0: can't open '/tmp/nosuch': No such file or directory\n", exitCode: 0 });
    const sub = await asUser('(. /tmp/s600); echo "$?"; . /tmp/sd; echo "$?"');
    expect(sub).toMatchObject({ stdout: '2\n0\n', stderr: "sh: .: line 0: can't open '/tmp/s600': Permission denied\n", exitCode: 0 });
  });
});
