import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGuestShell, type GuestShell } from './sim-client.js';

/**
 * busybox 1.35's text programs over several operands, as on the LXD 5.0.2 test bed (recorded there
 * as root and as user 1000): an operand that does not open is said and the next one read, a
 * directory reads as empty, and under `2>&1` the output and the messages come out in the order the
 * program wrote them (busybox flushes stdout before each message).
 */
let guest: GuestShell;

beforeAll(async () => {
  guest = await startGuestShell('to');
});

afterAll(() => guest.close());

const setup =
  "rm -rf /tmp/ia; mkdir /tmp/ia; cd /tmp/ia; printf 'b\\na\\nc\\n' > f1; printf 'z\\ny\\n' > f2; printf 'x y' > nonl; : > empty; " +
  "mkdir d1; printf 'secret\\n' > ro; chmod 000 ro; mkdir w; chmod 777 w; printf '1:2:3\\n4:5:6\\n' > t; printf 'hello\\n' > h";

const run = async (script: string, user?: number) => {
  await guest.sh(setup);
  const command = ['sh', '-c', script];
  return (await guest.client.exec('to', { command, cwd: '/tmp/ia', ...(user === undefined ? {} : { user, group: user }) })).wait({
    timeoutMs: 20_000,
  });
};

describe('cut', () => {
  it('says an operand it cannot open and goes on, a directory read as empty, in order under 2>&1', async () => {
    const r = await run('cut -d: -f2 t /nosuch t 2>&1; echo rc=$?; cut -c1 d1 f1; echo rc=$?; echo abc | cut -c2 - /nosuch f1 2>&1; echo rc=$?');
    expect(r.stdout).toBe(
      '2\n5\ncut: /nosuch: No such file or directory\n2\n5\nrc=1\nb\na\nc\nrc=0\nb\ncut: /nosuch: No such file or directory\n\n\n\nrc=1\n',
    );
  });

  it('as user 1000: a file it may not read is Permission denied, the next read', async () => {
    const r = await run('cut -c1 ro f1 2>&1; echo rc=$?', 1000);
    expect(r.stdout).toBe('cut: ro: Permission denied\nb\na\nc\nrc=1\n');
  });

  it("answers busybox's refusals and its list arithmetic", async () => {
    const r = await run(
      'cut f1; echo rc=$?; cut -s -c1 t; cut -d: -c1 t; cut -c 3-1 f1; cut -c a f1; cut -c 1-0 t; cut -c 2,1 -D t; printf "a b  c\\n" | cut -F 2,3',
    );
    expect(r.stderr).toBe(
      'cut: expected a list of bytes, characters, or fields\ncut: suppressing non-delimited lines makes sense only when operating on fields\n' +
        "cut: a delimiter may be specified only when operating on fields\ncut: 1<2\ncut: invalid number 'a'\n",
    );
    expect(r.stdout).toBe('rc=1\n1\n4\n:1\n:4\nb c\n');
  });
});

describe('od', () => {
  it('reads its operands as one stream, each message where the stream reaches it, a directory a read error', async () => {
    const r = await run(
      'printf abcdefghijklmnopqrst > w/20; od -c w/20 /nosuch f2 2>&1; echo rc=$?; od -c /nosuch /nosuch2 2>&1; echo rc=$?; od -c f1 d1 2>&1; echo rc=$?',
    );
    expect(r.stdout).toBe(
      '0000000   a   b   c   d   e   f   g   h   i   j   k   l   m   n   o   p\n' +
        'od: /nosuch: No such file or directory\n0000020   q   r   s   t   z  \\n   y  \\n\n0000030\nrc=1\n' +
        'od: /nosuch: No such file or directory\nod: /nosuch2: No such file or directory\nrc=1\n' +
        'od: d1: read error\n0000000   b  \\n   a  \\n   c  \\n\n0000006\nrc=1\n',
    );
  });
});

describe('sed', () => {
  it('says an operand it cannot open when it reads ahead into it, and reads the rest as the same stream', async () => {
    const r = await run("sed -n p f1 /nosuch f2 2>&1; echo rc=$?; sed = /nosuch f1 /n2 f2 /n3 2>&1; sed -n '$p' f1 /nosuch; echo rc=$?");
    expect(r.stdout).toBe(
      'b\na\nsed: /nosuch: No such file or directory\nc\nz\ny\nrc=1\n' +
        'sed: /nosuch: No such file or directory\n1\nb\n2\na\nsed: /n2: No such file or directory\n3\nc\n4\nz\n' +
        'sed: /n3: No such file or directory\n5\ny\nc\nrc=1\n',
    );
  });

  it('never reaches an operand after the line it quits on; a directory reads as empty; stdin ends a stream', async () => {
    const r = await run('sed q f1 /nosuch 2>&1; echo rc=$?; sed p d1 f1 2>&1; echo rc=$?; echo in | sed p - /nosuch f2 2>&1; echo rc=$?');
    expect(r.stdout).toBe('b\nrc=0\nb\nb\na\na\nc\nc\nrc=0\nin\nin\nsed: /nosuch: No such file or directory\nz\nz\ny\ny\nrc=1\n');
  });

  it('as user 1000: a file it may not read is Permission denied; a script file it cannot open in busybox words', async () => {
    const r = await run('sed p ro f1 2>&1; echo rc=$?; sed -f /nosuch f1 2>&1; echo rc=$?', 1000);
    expect(r.stdout).toBe('sed: ro: Permission denied\nb\nb\na\na\nc\nc\nrc=1\nsed: /nosuch: No such file or directory\nrc=1\n');
  });

  it('refuses a bad option, an option without its value and a missing script with its usage', async () => {
    const r = await run('sed -x p; echo rc=$?; sed -e; echo rc=$?; sed; echo rc=$?');
    expect(r.stdout).toBe('rc=1\nrc=1\nrc=1\n');
    const usages = r.stderr.split('BusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: sed [-i[SFX]]');
    expect(usages.length).toBe(4);
    expect(usages[0]).toBe("sed: invalid option -- 'x'\n");
    expect(usages[1]).toMatch(/\nsed: option requires an argument -- 'e'\n$/);
  });

  it("ends the line p and = write of a last line without a newline; the pattern space printed at a cycle's end stays as it was", async () => {
    const r = await run("sed -n p f1 nonl; sed -n '$=' nonl; sed -n 's/x/X/p' nonl; echo; sed p nonl");
    expect(r.stdout).toBe('b\na\nc\nx y\n1\nX y\nx y\nx y');
  });

  it("words a missing label, an unknown command and a range without its end as busybox's sed", async () => {
    const r = await run("sed 'b nosuch' f1; sed k f1; sed '3,' f1; echo rc=$?");
    expect(r.stderr).toBe("sed: can't find label for jump to 'nosuch'\nsed: unsupported command k\nsed: no address after comma\n");
    expect(r.stdout).toBe('rc=1\n');
  });

  it('with -i edits the files that are there after saying the ones that are not', async () => {
    const r = await run('sed -i s/y/Y/ /nosuch f2 2>&1; echo rc=$?; cat f2');
    expect(r.stdout).toBe('sed: /nosuch: No such file or directory\nrc=1\nz\nY\n');
  });
});

describe('grep', () => {
  it('-r says a missing operand where it comes, goes on, and ends with 2 (0 under -q once a line matched)', async () => {
    const r = await run(
      'grep -r l /tmp/ia/h /nosuch 2>&1; echo rc=$?; grep -rl l /nosuch /tmp/ia/h 2>&1; echo rc=$?; grep -rq l /nosuch /tmp/ia/h 2>&1; echo rc=$?; grep -rs l /nosuch h; echo rc=$?; grep -r l /nosuch 2>&1; echo rc=$?',
    );
    expect(r.stdout).toBe(
      '/tmp/ia/h:hello\ngrep: /nosuch: No such file or directory\nrc=2\n' +
        'grep: /nosuch: No such file or directory\n/tmp/ia/h\nrc=2\n' +
        'grep: /nosuch: No such file or directory\nrc=0\n' +
        'h:hello\nrc=2\n' +
        'grep: /nosuch: No such file or directory\nrc=2\n',
    );
  });

  it('-l and -L name stdin (standard input), -q silencing them', async () => {
    const r = await run(
      'echo xb | grep -l x; echo "l $?"; echo a | grep -l x; echo "l $?"; echo a | grep -L x; echo "L $?"; echo x | grep -L x; echo "L $?"; ' +
        'echo x | grep -lv x; echo "lv $?"; echo x | grep -lq x; echo "lq $?"; echo x | grep -l x -; echo "l- $?"; printf "x\\nx\\n" | grep -lm1 x; echo "lm $?"',
    );
    expect(r.stdout).toBe('(standard input)\nl 0\nl 1\n(standard input)\nL 0\nL 1\nlv 1\nlq 0\n(standard input)\nl- 0\n(standard input)\nlm 0\n');
  });

  it('names the files under . as ./F, reads a directory operand without -r as empty, and takes -H', async () => {
    const r = await run('grep -rl l . ; echo rc=$?; grep l d1 h; echo rc=$?; grep -H l h; grep -rc l w; echo rc=$?', 1000);
    expect(r.stdout).toBe('./h\nrc=2\nh:hello\nrc=0\nh:hello\nrc=1\n');
    expect(r.stderr).toBe('grep: ./ro: Permission denied\n');
  });
});

describe('sort', () => {
  it("ends at the first operand it cannot open in busybox's words, status 2; a directory reads as empty", async () => {
    const r = await run('sort f1 /nosuch f2 2>&1; echo rc=$?; sort f1 d1; echo rc=$?; sort -o w/out f1 /nosuch 2>&1; echo rc=$?; ls w');
    expect(r.stdout).toBe('sort: /nosuch: No such file or directory\nrc=2\na\nb\nc\nrc=0\nsort: /nosuch: No such file or directory\nrc=2\n');
  });

  it('refuses bad keys, separators and output files as busybox does', async () => {
    const r = await run(
      'sort -k 0 f1; sort -k 2,1x f1; sort -t ab f1; sort -o d1 f1; sort -o /nosuchdir/x f1; sort -c f1; echo rc=$?; sort -x f1 2>&1 | head -1; sort -S 10 -T /tmp -r f1',
    );
    expect(r.stderr).toBe(
      "sort: bad field specification\nsort: unknown key option\nsort: bad -t parameter\nsort: can't open 'd1': Is a directory\n" +
        "sort: can't open '/nosuchdir/x': No such file or directory\nCheck line 1\n",
    );
    expect(r.stdout).toBe("rc=1\nsort: invalid option -- 'x'\nc\nb\na\n");
  });

  it('as user 1000: a file it may not read, an output file it may not write', async () => {
    const r = await run('sort ro; echo rc=$?; sort -o ro f1; echo rc=$?', 1000);
    expect(r.stderr).toBe("sort: ro: Permission denied\nsort: can't open 'ro': Permission denied\n");
    expect(r.stdout).toBe('rc=2\nrc=2\n');
  });

  it('sorts by keys, numbers, months and versions as busybox does', async () => {
    const r = await run(
      "printf 'x:3:a\\ny:1:b\\nz:2:a\\n' > w/t; sort -t: -k3,3 -k1r w/t; printf '10\\n9\\n-1\\n1e2\\nabc\\n 5\\n' | sort -g; printf 'Feb\\njan\\nDEC\\nfoo\\n' | sort -M",
    );
    expect(r.stdout).toBe('z:2:a\nx:3:a\ny:1:b\nabc\n-1\n 5\n9\n10\n1e2\nfoo\njan\nFeb\nDEC\n');
  });
});

describe('cat with options', () => {
  it("-n and -b number as busybox (nl's numbering) and say a missing operand where they reach it", async () => {
    const r = await run('cat -n f1 /nosuch f2 2>&1; echo rc=$?; cat -n nonl d1 f1; printf "a\\n\\nb" | cat -b');
    expect(r.stdout).toBe(
      '     1\tb\n     2\ta\n     3\tc\ncat: /nosuch: No such file or directory\n     4\tz\n     5\ty\nrc=1\n' +
        '     1\tx y\n     2\tb\n     3\ta\n     4\tc\n     1\ta\n\n     2\tb\n',
    );
  });

  it('-v, -t, -e and -A show bytes as visible() does and say an operand they cannot open in place', async () => {
    const r = await run("cat -A f1 /nosuch f2 2>&1; echo rc=$?; printf '\\200\\377\\033x\\177\\t\\n' | cat -t; cat -vn f1 d1; echo rc=$?");
    expect(r.stdout).toBe(
      "b$\na$\nc$\ncat: can't open '/nosuch': No such file or directory\nz$\ny$\nrc=1\nM-^@M-^?^[x^?^I\n" + '     1  b\n     2  a\n     3  c\nrc=1\n',
    );
  });

  it('refuses an option busybox lacks with its usage; a directory without options is a read error', async () => {
    const r = await run('cat -s f1; echo rc=$?; cat d1 f1 2>&1; echo rc=$?');
    expect(r.stderr).toMatch(/^cat: invalid option -- 's'\nBusyBox v1\.35\.0 .*\n\nUsage: cat \[-nbvteA\] \[FILE\]\.\.\.\n/);
    expect(r.stdout).toBe('rc=1\ncat: read error: Is a directory\nb\na\nc\nrc=1\n');
  });
});

describe('stdin named twice', () => {
  it('is read once: the second - is at its end', async () => {
    const r = await run("printf 'a\\n' | cut -f1 -d' ' - -; printf 'a\\n' | od -c - -; printf 'b\\na\\n' | sort - -; printf 'a\\n' | cat -n - f1 -");
    expect(r.stdout).toBe('a\n0000000   a  \\n\n0000002\na\nb\n     1\ta\n     2\tb\n     3\ta\n     4\tc\n');
  });
});

describe("just-bash's programs over a file that does not open", () => {
  const programs = 'nl rev fold uniq md5sum sha256sum xxd hexdump tac strings paste base64';
  const said = (p: string, name: string, why: string): string =>
    ['uniq', 'md5sum', 'sha256sum'].includes(p) ? `${p}: can't open '${name}': ${why}\n` : `${p}: ${name}: ${why}\n`;

  it('name it as the command gave it, with busybox wording, status 1', async () => {
    const r = await run(`for p in ${programs}; do $p nosuch 2>&1; echo "$p rc=$?"; done`);
    expect(r.stdout).toBe(
      programs
        .split(' ')
        .map((p) => `${said(p, 'nosuch', 'No such file or directory')}${p} rc=1\n`)
        .join(''),
    );
  });

  it('as user 1000: a file it may not read is Permission denied', async () => {
    const r = await run(`for p in ${programs}; do $p ro 2>&1; echo "$p rc=$?"; done`, 1000);
    expect(r.stdout).toBe(
      programs
        .split(' ')
        .map((p) => `${said(p, 'ro', 'Permission denied')}${p} rc=1\n`)
        .join(''),
    );
  });
});
