import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGuestShell, type GuestShell } from './sim-client.js';

/**
 * Guest shell behaviours that were left over from the busybox sh on the LXD 5.0.2 test bed
 * (each expected output was recorded there).
 */
let guest: GuestShell;

beforeAll(async () => {
  guest = await startGuestShell('hxl');
});

afterAll(() => guest.close());

const sh = (script: string) => guest.sh(script);

describe("a program's raw bytes beside its stderr", () => {
  it('pass through 2>/dev/null, 2>&1 and 2>FILE, in groups, subshells, functions, loops and pipelines', async () => {
    const script = [
      "cd /tmp; printf 'hi\\n' > f",
      'bzip2 -c f nosuch 2>/dev/null | bzcat; echo "a $?"',
      '{ gzip -c f nosuch 2>/dev/null; } | zcat; echo "b $?"',
      '(bzip2 -c f nosuch 2>/tmp/e) | bzcat; cat /tmp/e; echo "c $?"',
      'gzip -c f nosuch 2>/dev/null > /tmp/o.gz; zcat /tmp/o.gz; echo "d $?"',
      "{ printf '\\377'; cat nosuch; printf '\\376'; } 2>/dev/null | od -An -tx1",
      "( printf '\\375'; cat nosuch; printf '\\374'; ) 2>&1 | od -An -c",
      'gzip -c f nosuch 2>&1 | wc -l',
      'f() { bzip2 -c f nosuch; }; f 2>/dev/null | bzcat; echo "e $?"',
      'for i in 1; do gzip -c f nosuch; done 2>/tmp/e2 | zcat; cat /tmp/e2',
    ].join('\n');
    const r = await sh(script);
    expect(r).toMatchObject({ exitCode: 0, stderr: '' });
    expect(r.stdout).toBe(
      [
        'hi',
        'a 0',
        'hi',
        'b 0',
        'hi',
        'bzip2: nosuch: No such file or directory',
        'c 0',
        'hi',
        'd 0',
        ' ff fe',
        " 375   c   a   t   :       c   a   n   '   t       o   p   e   n",
        "       '   n   o   s   u   c   h   '   :       N   o       s   u",
        '   c   h       f   i   l   e       o   r       d   i   r   e   c',
        '   t   o   r   y  \\n 374',
        '1',
        'hi',
        'e 0',
        'hi',
        'gzip: nosuch: No such file or directory',
        '',
      ].join('\n'),
    );
  });
});

describe("the shell's messages sent to stdout or a file", () => {
  it('start with the name of the shell that gives them, as they do on stderr', async () => {
    const script = [
      'sh -c nosuchcmd 2>&1; nosuchcmd 2>/tmp/e; cat /tmp/e',
      'sh -c \'nosuch 2>&1\' NAME; x=$(nosuch 2>&1); echo "x=$x"; { nosuch; echo out; } 2>&1 | cat',
      'printf \'echo "s=$0"\\nnosuch 2>&1\\n\' > /tmp/s2; chmod +x /tmp/s2; /tmp/s2; cd /tmp; ./s2; /nosuch/x 2>&1',
      "printf 'nosuch 2>&1\\n' > /tmp/s3; . /tmp/s3; cd /nonexist 2>&1; echo 'bash: literal'",
    ].join('\n');
    const r = await sh(script);
    expect(r).toMatchObject({ exitCode: 0, stderr: '' });
    expect(r.stdout).toBe(
      [
        'sh: nosuchcmd: not found',
        'sh: nosuchcmd: not found',
        'NAME: line 0: nosuch: not found',
        'x=sh: nosuch: not found',
        'sh: nosuch: not found',
        'out',
        's=/tmp/s2',
        '/tmp/s2: line 2: nosuch: not found',
        's=./s2',
        './s2: line 2: nosuch: not found',
        'sh: /nosuch/x: not found',
        'sh: /tmp/s3: line 1: nosuch: not found',
        "sh: cd: line 3: can't cd to /nonexist: No such file or directory",
        'bash: literal',
        '',
      ].join('\n'),
    );
  });
});

describe('a subshell', () => {
  it('has its own umask and traps, and runs its own EXIT trap as it ends', async () => {
    const script = [
      '(umask 077; umask; cd /tmp; trap "echo t" EXIT; pwd); umask; pwd; (trap "echo t2" EXIT; exit 3); echo "rc=$?"',
      '(trap "echo t3" INT; trap); echo ---; trap; trap "echo outer" EXIT; (echo sub; trap); (trap - EXIT; echo in); echo end',
      '(umask 077; touch /tmp/m1); touch /tmp/m2; ls -l /tmp/m1 /tmp/m2 | cut -c1-10',
      "(trap 'echo tt; exit 5' EXIT; exit 3); echo \"rc=$?\"; (trap 'echo x' EXIT; echo y) | cat; x=$( (trap 'echo inner' EXIT; echo a) ); echo \"x=$x\"",
    ].join('\n');
    const r = await sh(script);
    expect(r).toMatchObject({ exitCode: 0, stderr: '' });
    expect(r.stdout).toBe(
      [
        '0077',
        '/tmp',
        't',
        '0022',
        '/root',
        't2',
        'rc=3',
        "trap -- 'echo t3' INT",
        '---',
        'sub',
        'in',
        'end',
        '-rw-------',
        '-rw-r--r--',
        'tt',
        'rc=5',
        'y',
        'x',
        'x=a',
        'inner',
        'outer',
        '',
      ].join('\n'),
    );
  });

  it('so is each command of a pipeline and a command substitution', async () => {
    const r = await sh(
      [
        'umask 077 | cat; umask; x=$(umask 027; umask); echo "x=$x"; umask; cd /tmp | cat; pwd; trap \'echo t\' EXIT | cat; echo end',
        'x=$(trap \'echo in\' EXIT; echo a); echo "x=$x"; x=$(cd /tmp; pwd); pwd; echo a | { read y; echo "y=$y"; }; echo "y=$y"; echo hi | (umask 066; cat; umask)',
      ].join('\n'),
    );
    expect(r).toMatchObject({ exitCode: 0, stderr: '' });
    expect(r.stdout).toBe(['0022', 'x=0027', '0022', '/root', 't', 'end', 'x=a', 'in', '/root', 'y=a', 'y=', 'hi', '0066', ''].join('\n'));
  });
});

describe("a shell's environment", () => {
  it('a shell started with none has busybox’s default PATH, exported, and counts its level', async () => {
    const r = await sh(
      [
        'env -i sh -c "echo \\$PATH; env"; env -i /bin/sh -c "echo \\$PATH"',
        "sh -c 'echo $SHLVL; sh -c \"echo \\$SHLVL\"'; SHLVL=abc sh -c 'echo $SHLVL'",
        "env -u PATH sh -c 'echo $PATH; ls / >/dev/null && echo ok'; echo $SHLVL",
      ].join('\n'),
    );
    expect(r).toMatchObject({ exitCode: 0, stderr: '' });
    expect(r.stdout).toBe(
      [
        '/sbin:/usr/sbin:/bin:/usr/bin',
        'SHLVL=1',
        'PATH=/sbin:/usr/sbin:/bin:/usr/bin',
        'PWD=/root',
        '/sbin:/usr/sbin:/bin:/usr/bin',
        '2',
        '3',
        '1',
        '/sbin:/usr/sbin:/bin:/usr/bin',
        'ok',
        '1',
        '',
      ].join('\n'),
    );
  });

  it('export NAME without a value exports it unset: export -p lists `export NAME`, env and a child see nothing', async () => {
    const r = await sh(
      'export C; echo "${C-unset}"; env | grep -c "^C="; sh -c "echo \\${C-unset2}"; export -p | grep " C"; C=; export -p | grep " C"; export E; E=3; env | grep ^E=',
    );
    expect(r).toMatchObject({ exitCode: 0, stderr: '' });
    expect(r.stdout).toBe(['unset', '0', 'unset2', 'export C', "export C=''", 'E=3', ''].join('\n'));
  });
});

describe('a script that starts with #!', () => {
  it('counts its lines from the #! line: $LINENO and the line of an error', async () => {
    const r = await sh("printf '#!/bin/sh\\necho $LINENO\\nnosuch\\n' > /tmp/s; chmod +x /tmp/s; /tmp/s; sh /tmp/s; . /tmp/s");
    expect(r).toMatchObject({
      exitCode: 127,
      stdout: '2\n2\n2\n',
      stderr: ['/tmp/s: line 3: nosuch: not found', '/tmp/s: line 3: nosuch: not found', 'sh: /tmp/s: line 3: nosuch: not found', ''].join('\n'),
    });
  });
});

describe('sh -c CMD NAME ARGS… as the exec’s command', () => {
  it('makes NAME $0 and the name of the shell’s messages, and ARGS the positional parameters', async () => {
    const run = await guest.client.exec('hxl', { command: ['sh', '-c', 'echo "$0 $1 $#"; nosuch', 'NAME', 'A'] });
    const r = await run.wait({ timeoutMs: 20_000 });
    expect(r).toMatchObject({ exitCode: 127, stdout: 'NAME A 1\n', stderr: 'NAME: line 0: nosuch: not found\n' });
  });
});
