import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGuestShell, type GuestShell } from './sim-client.js';

/**
 * The shell's descriptors as busybox 1.35's ash keeps them on the LXD 5.0.2 test bed (recorded
 * there with `lxc exec -- sh -c …`, as root and as user 1000): a pipe or a command substitution is
 * fd 1 of the commands it holds whatever `exec` made of the shell's fd 1, and what those commands
 * `exec` stays theirs; a descriptor copied from fd 1 (`exec 3>&1`) is the shell's stdout as it was
 * then, past any pipe, substitution or redirection of fd 1 that a command writing to it is inside.
 */
let guest: GuestShell;

beforeAll(async () => {
  guest = await startGuestShell('fd');
});
afterAll(() => guest.close());

const run = async (script: string, user?: number) =>
  (await guest.client.exec('fd', { command: ['sh', '-c', script], ...(user === undefined ? {} : { user, group: user, cwd: '/tmp' }) })).wait({
    timeoutMs: 20_000,
  });

describe('a pipe and a command substitution after exec 1>FILE or exec 1>&2', () => {
  it('take the output of the commands they hold', async () => {
    const r = await run(
      'exec 1>&2; x=$(echo sub); echo "x=$x"; echo y > /tmp/f; cat /tmp/f; echo z | wc -l; { echo g; echo h; } > /tmp/g; cat /tmp/g; ls /nosuch 2>&1 | wc -l; ' +
        'f() { echo fn; }; y=$(f); echo "y=$y"; z=`echo bq`; echo "z=$z"',
    );
    expect(r).toMatchObject({ exitCode: 0, stdout: '', stderr: 'x=sub\ny\n1\ng\nh\n1\ny=fn\nz=bq\n' });
    const u = await run('exec 1>/tmp/ou; x=$(echo sub); echo "x=$x"; echo z | wc -l; exec 1>&2; echo b; cat /tmp/ou', 1000);
    expect(u).toMatchObject({ exitCode: 0, stdout: '', stderr: 'b\nx=sub\n1\n' });
  });

  it('keep what their commands exec to themselves (they are other processes in ash)', async () => {
    const r = await run('{ exec 1>/tmp/o; echo a; exec 1>&2; echo b; ls /nosuch; echo c; } | cat; cat /tmp/o; x=$(exec 1>&2); echo after');
    expect(r).toMatchObject({ exitCode: 0, stdout: 'a\nafter\n', stderr: 'b\nls: /nosuch: No such file or directory\nc\n' });
  });
});

describe('a descriptor copied from fd 1 by exec', () => {
  it('is the shell stdout of the moment past a pipe, for fds 3 to 9', async () => {
    const r = await run('exec 3>&1; echo x >&3 | wc -l; exec 4>&1; echo x >&4 | wc -l; exec 9>&1; { echo y >&9; echo z; } | wc -l');
    expect(r).toMatchObject({ exitCode: 0, stdout: 'x\n0\nx\n0\ny\n1\n', stderr: '' });
  });

  it('is the shell stdout of the moment past a command substitution and a redirected compound command', async () => {
    const r = await run(
      'exec 3>&1; x=$(echo in >&3; echo sub); echo "x=$x"; { echo g >&3; echo h; } > /tmp/g; echo ==; cat /tmp/g; ' +
        'exec 1>&2; y=$(echo sub2 >&3); echo "y=$y"',
    );
    expect(r).toMatchObject({ exitCode: 0, stdout: 'in\nx=sub\ng\n==\nh\nsub2\n', stderr: 'y=\n' });
  });

  it('keeps its writes in order with the rest of the output, in loops, functions and under 2>&1 or 2>/dev/null', async () => {
    const r = await run(
      'exec 5>&1; for i in 1 2; do echo $i >&5 | cat; echo y; done; echo z >&5 | wc -c; ' +
        'exec 3>&1; f() { echo f >&3; echo g; }; f | wc -l; ' +
        '{ echo x >&3; ls /nosuch; } 2>&1 | wc -l; { echo x2 >&3; ls /nosuch; } 2>/dev/null | wc -l; ' +
        'exec 1>/tmp/o; echo a | cat; echo b >&3 | cat; exec 1>&3; echo c; cat /tmp/o',
    );
    expect(r).toMatchObject({ exitCode: 0, stderr: '' });
    expect(r.stdout).toBe(['1', 'y', '2', 'y', 'z', '0', 'f', '1', 'x', '1', 'x2', '0', 'b', 'c', 'a', ''].join('\n'));
  });

  it('as user 1000 too, and a subshell in a pipe that copies fd 1 copies the pipe', async () => {
    const r = await run(
      'exec 3>&1; echo x >&3 | wc -l; exec 7>&1; y=$(echo q >&7); echo "y=$y"; (exec 4>&1; echo i >&4) | wc -l; (exec 2>&1; ls /nosuch) | wc -l',
      1000,
    );
    expect(r).toMatchObject({ exitCode: 0, stdout: 'x\n0\nq\ny=\n1\n1\n', stderr: '' });
  });
});

describe('a copy of the shell stdout inside a command whose stdout is redirected', () => {
  it('reaches the shell stdout from a function, eval, a sourced file, a child shell and a function defined with a redirection', async () => {
    const r = await run(
      "exec 3>&1; f() { echo x >&3; echo y; }; f > /tmp/f; echo ==; cat /tmp/f; eval 'echo e >&3; echo e2' > /tmp/e; echo ==; cat /tmp/e; " +
        "printf 'echo s >&3\\necho t\\n' > /tmp/src.sh; . /tmp/src.sh > /tmp/so; echo ==; cat /tmp/so; sh -c 'echo c >&3; echo d' > /tmp/c; echo ==; cat /tmp/c; " +
        'g() { echo in >&3; } > /tmp/g; g; echo ==; cat /tmp/g',
    );
    expect(r).toMatchObject({ exitCode: 0, stderr: '' });
    expect(r.stdout).toBe(['x', '==', 'y', 'e', '==', 'e2', 's', '==', 't', 'c', '==', 'd', 'in', '==', ''].join('\n'));
  });
});

describe('fd 1 made a copy of the shell stdout again (exec 1>&3 after exec 3>&1, exec 1>&2 after exec 2>&1)', () => {
  it("is a compound command's own stdout, which the command's redirection sends to its file", async () => {
    const r = await run(
      'exec 3>&1; exec 1>&3; { echo x; } > /tmp/g; echo ==; cat /tmp/g; exec 2>&1; exec 1>&2; { echo c; ls /nosuch; } > /tmp/c; echo ==; cat /tmp/c',
    );
    expect(r).toMatchObject({ exitCode: 0, stderr: '', stdout: '==\nx\nls: /nosuch: No such file or directory\n==\nc\n' });
  });
});

describe('a descriptor copied from fd 2 by exec', () => {
  it('is the shell stderr of the moment past a redirection of stderr, in a function, eval, a child shell or a substitution', async () => {
    const r = await run(
      'exec 4>&2; { echo a; echo b >&4; } 2>/dev/null | cat; echo c; ' +
        "f() { echo e1 >&4; ls /nosuch; }; f 2>/dev/null; f 2>&1 | wc -l; eval 'echo e2 >&4' 2>/tmp/e2; cat /tmp/e2; sh -c 'echo e3 >&4' 2>/dev/null; " +
        'x=$(echo s >&4 2>/dev/null); { x=$(echo t >&4); } 2>/dev/null; echo "x=$x"',
    );
    expect(r).toMatchObject({ exitCode: 0, stdout: 'a\nc\n1\nx=\n', stderr: 'b\ne1\ne1\ne2\ne3\ns\nt\n' });
  });

  it('stays the stderr after exec 2>&1 or exec 2>FILE, and a copy of stdout made by exec 2>&1 stays the stdout', async () => {
    const r = await run(
      'exec 4>&2; exec 2>&1; { echo x >&4; ls /nosuch; } | wc -l; echo y >&4; exec 2>&4; ' +
        'exec 2>/tmp/e; { echo x2 >&4; ls /nosuch; }; echo y2 >&4; exec 2>&4; cat /tmp/e; ' +
        'exec 2>&1; exec 5>&2; { echo z >&5; } 2>/dev/null; { ls /nosuch; } 2>/dev/null; { ls /nosuch3; } > /tmp/n3; echo ==; cat /tmp/n3',
    );
    expect(r).toMatchObject({ exitCode: 0, stderr: 'x\ny\nx2\ny2\n' });
    expect(r.stdout).toBe(
      [
        'ls: /nosuch: No such file or directory',
        '0',
        'ls: /nosuch: No such file or directory',
        'z',
        'ls: /nosuch3: No such file or directory',
        '==',
        '',
      ].join('\n'),
    );
  });
});

describe("a child shell's descriptors", () => {
  it('are its parent shell descriptors from 3 up: a file, and a copy of the stdout past the pipe the child is in', async () => {
    const r = await run(
      "exec 3>/tmp/log; sh -c 'echo one >&3; echo out'; echo two >&3; sh -c 'echo three >&3' | cat; cat /tmp/log; " +
        "exec 6>&1; sh -c 'echo child >&6' | wc -l; exec 4>&1; x=$(sh -c 'echo in >&4; echo sub'); echo \"x=$x\"; " +
        "printf 'echo s1 >&4\\necho s2\\n' > /tmp/s.sh; sh /tmp/s.sh | wc -l; exec 4>&-; sh -c 'echo z >&4'; echo rc=$?",
    );
    expect(r).toMatchObject({ exitCode: 0, stderr: 'sh: 4: Bad file descriptor\n' });
    expect(r.stdout).toBe(['out', 'one', 'two', 'three', 'child', '0', 'in', 'x=sub', 's1', '1', 'rc=1', ''].join('\n'));
  });
});

describe('a closed stdout', () => {
  it('fails a write as ash does: echo says so, the other builtins are silent, status 1', async () => {
    const r = await run(
      'echo a >&-; echo rc=$?; echo b 1>&-; echo rc=$?; { echo c; } >&-; echo rc=$?; exec >&-; printf x; echo rc=$? >&2; pwd; echo rc=$? >&2; echo e; echo rc=$? >&2',
    );
    expect(r).toMatchObject({ exitCode: 0, stdout: 'rc=1\nrc=1\nrc=1\n' });
    expect(r.stderr).toBe(
      [
        'sh: write error: Bad file descriptor',
        'sh: write error: Bad file descriptor',
        'sh: write error: Bad file descriptor',
        'rc=1',
        'rc=1',
        'sh: write error: Bad file descriptor',
        'rc=1',
        '',
      ].join('\n'),
    );
  });
});
