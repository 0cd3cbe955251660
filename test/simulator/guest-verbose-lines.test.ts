import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGuestShell, type GuestShell } from './sim-client.js';

/**
 * What a few programs and builtins print, line for line, as busybox 1.35 prints them on the LXD
 * 5.0.2 test bed (recorded there with `lxc exec -- sh -c …`): `mv -v` and `ln -v` say each operand
 * whatever became of it, `readlink` takes one operand, `command -v`/`-V` describe the first name
 * only, and `type` words functions, special builtins and paths as ash does.
 */
let guest: GuestShell;

beforeAll(async () => {
  guest = await startGuestShell('vl');
});
afterAll(() => guest.close());

const usage = [
  'BusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.',
  '',
  'Usage: readlink [-fnv] FILE',
  '',
  'Display the value of a symlink',
  '',
  '\t-f\tCanonicalize by following all symlinks',
  "\t-n\tDon't add newline",
  '\t-v\tVerbose',
  '',
].join('\n');

describe('mv -v', () => {
  it('says each operand after trying it: a failed rename, an operand -n or a refused -i skipped, a destination it could not stat', async () => {
    const r = await guest.sh(
      'cd /tmp; rm -rf mv3; mkdir mv3; cd mv3; touch f g h; mv -v g f/x 2>&1; echo rc=$?; mkdir d; mv -v g nosuch h d 2>&1; echo rc=$?; ' +
        'touch d/f; mv -nv f d 2>&1; echo rc=$?; mv -v d/f f/x 2>&1; echo rc=$?; mkdir e; mv -v e d/g 2>&1; echo rc=$?; mv -v e/ e/x 2>&1; echo rc=$?; ' +
        'touch k; echo n | mv -iv k d/h 2>&1; echo; echo rc=$?; mkdir m; touch m2; mv -v d/h m2 k m 2>&1; echo rc=$?',
    );
    expect(r).toMatchObject({ exitCode: 0, stderr: '' });
    expect(r.stdout).toBe(
      [
        "mv: can't stat 'f/x': Path has non-directory component",
        'rc=1',
        "'g' -> 'd/g'",
        "mv: can't rename 'nosuch': No such file or directory",
        "'nosuch' -> 'd/nosuch'",
        "'h' -> 'd/h'",
        'rc=1',
        "'f' -> 'd/f'",
        'rc=0',
        "mv: can't stat 'f/x': Path has non-directory component",
        'rc=1',
        "mv: can't rename 'e': Not a directory",
        "'e' -> 'd/g'",
        'rc=1',
        "mv: can't rename 'e/': Invalid argument",
        "'e/' -> 'e/x'",
        'rc=1',
        "mv: overwrite 'd/h'? 'k' -> 'd/h'",
        '',
        'rc=0',
        "'d/h' -> 'm/h'",
        "'m2' -> 'm/m2'",
        "'k' -> 'm/k'",
        'rc=0',
        '',
      ].join('\n'),
    );
  });
});

describe('ln -v', () => {
  it('says each link before making it, so a link that fails is said too', async () => {
    const r = await guest.sh(
      'cd /tmp; rm -rf ln1; mkdir ln1; cd ln1; ln -sv t l; echo rc=$?; echo x > f; ln -v f h; ln -sfv f l; mkdir d; ln -sv f g d; ' +
        'ln -v f 2>&1; echo rc=$?; ln -sv f l 2>&1; echo rc=$?; ln -v nosuch h2 2>&1; echo rc=$?; ln -sv f nosuchdir/l 2>&1; echo rc=$?; ln -v d dl 2>&1; echo rc=$?',
    );
    expect(r).toMatchObject({ exitCode: 0, stderr: '' });
    expect(r.stdout).toBe(
      [
        "'l' -> 't'",
        'rc=0',
        "'h' -> 'f'",
        "'l' -> 'f'",
        "'d/f' -> 'f'",
        "'d/g' -> 'g'",
        "'f' -> 'f'",
        'ln: f: File exists',
        'rc=1',
        "'l' -> 'f'",
        'ln: l: File exists',
        'rc=1',
        'ln: nosuch: No such file or directory',
        'rc=1',
        "'nosuchdir/l' -> 'f'",
        'ln: nosuchdir/l: No such file or directory',
        'rc=1',
        "'dl' -> 'd'",
        'ln: dl: Operation not permitted',
        'rc=1',
        '',
      ].join('\n'),
    );
  });
});

describe('readlink', () => {
  it('takes exactly one operand: two (with -f or not) or none print its usage, status 1', async () => {
    const r = await guest.sh(
      'cd /tmp; ln -sf /etc/passwd rl1; ln -sf rl1 rl2; readlink rl1 rl2; echo rc=$?; readlink -f rl1 rl2; echo rc=$?; readlink rl2; echo rc=$?; readlink; echo rc=$?',
    );
    expect(r).toMatchObject({ exitCode: 0, stdout: 'rc=1\nrc=1\nrl1\nrc=0\nrc=1\n', stderr: usage.repeat(3) });
  });

  it('is silent on errors but with -v, and -f canonicalizes as busybox does (a missing last name kept, a dangling link from here)', async () => {
    const r = await guest.sh(
      'cd /tmp; ln -sf /etc/passwd rl1; ln -sf nosuchtarget rl3; ln -sf rl4 rl4; readlink -v /etc/passwd; echo rc=$?; readlink -v /nosuch; echo rc=$?; readlink -fv /nosuch/x; echo rc=$?; ' +
        'readlink -f /tmp/nosuch; echo rc=$?; readlink -f rl3; echo rc=$?; readlink -n rl1; echo; readlink -vf rl4; echo rc=$?; readlink -v rl4; echo rc=$?; readlink -q -s rl1; echo rc=$?; ' +
        'readlink -f /tmp/../etc//passwd/; echo rc=$?; readlink -f ""; echo rc=$?; readlink -f /etc/passwd/x; echo rc=$?; readlink -v /etc/passwd/x; echo rc=$?; readlink -f /tmp/rl3/; echo rc=$?',
    );
    expect(r).toMatchObject({ exitCode: 0 });
    expect(r.stdout).toBe(
      [
        'rc=1',
        'rc=1',
        'rc=1',
        '/tmp/nosuch',
        'rc=0',
        '/tmp/nosuchtarget',
        'rc=0',
        '/etc/passwd',
        'rc=1',
        'rl4',
        'rc=0',
        '/etc/passwd',
        'rc=0',
        'rc=1',
        'rc=1',
        'rc=1',
        'rc=1',
        '/tmp/rl3',
        'rc=0',
        '',
      ].join('\n'),
    );
    expect(r.stderr).toBe(
      [
        'readlink: /etc/passwd: cannot read link: not a symlink',
        'readlink: /nosuch: cannot read link: No such file or directory',
        'readlink: /etc/passwd/x: cannot read link: Not a directory',
        '',
      ].join('\n'),
    );
  });
});

describe('command -v, command -V and type', () => {
  it('command -v and -V describe the first name only, with its status', async () => {
    const r = await guest.sh(
      'command -v ls nosuch cat; echo rc=$?; command -v nosuch ls; echo rc=$?; command -v ls cat; echo rc=$?; command -V ls nosuch cat; echo rc=$?; command -v; echo rc=$?',
    );
    expect(r).toMatchObject({ exitCode: 0, stderr: '', stdout: 'ls\nrc=0\nrc=127\nls\nrc=0\nls is ls\nrc=0\nrc=0\n' });
  });

  it('say a function in one line, a special builtin as special, a path that is there as itself', async () => {
    const r = await guest.sh(
      'f() { echo hi; }; type f if echo cd export : ls /bin/ls /tmp nosuch; echo rc=$?; command -V f; command -V export; command -V /tmp; command -v /tmp; command -v export',
    );
    expect(r).toMatchObject({ exitCode: 0, stderr: '' });
    expect(r.stdout).toBe(
      [
        'f is a function',
        'if is a shell keyword',
        'echo is a shell builtin',
        'cd is a shell builtin',
        'export is a special shell builtin',
        ': is a special shell builtin',
        'ls is ls',
        '/bin/ls is /bin/ls',
        '/tmp is /tmp',
        'nosuch: not found',
        'rc=127',
        'f is a function',
        'export is a special shell builtin',
        '/tmp is /tmp',
        '/tmp',
        'export',
        '',
      ].join('\n'),
    );
  });
  it("know ash's keywords only, and take [[ as a word after a command's name", async () => {
    const r = await guest.sh('type [[; type ]]; type function select time !; echo rc=$?; command -V [[; command -v [[; echo [[ ]]');
    expect(r).toMatchObject({ exitCode: 0, stderr: '' });
    expect(r.stdout).toBe(
      [
        '[[ is a shell builtin',
        ']]: not found',
        'function is a shell keyword',
        'select: not found',
        'time is time',
        '! is a shell keyword',
        'rc=127',
        '[[ is a shell builtin',
        '[[',
        '[[ ]]',
        '',
      ].join('\n'),
    );
  });
});
