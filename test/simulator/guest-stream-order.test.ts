import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGuestShell, type GuestShell } from './sim-client.js';

/**
 * Under `2>&1` one program's output and its messages come out in the order the program wrote
 * them, as busybox 1.35 writes them on the LXD 5.0.2 test bed (recorded there, as root and as user
 * 1000): busybox flushes stdout before each message (libbb/verror_msg.c), so `wc f1 /nosuch f2`
 * prints f1's line, the message, f2's line and the total. The simulator gave all of stdout first.
 */
let guest: GuestShell;

beforeAll(async () => {
  guest = await startGuestShell('so');
});

afterAll(() => guest.close());

const setup = (dir: string) =>
  `rm -rf ${dir}; mkdir ${dir}; cd ${dir}; echo a > f1; echo b > f2; mkdir d1; i=0; while [ $i -lt 700 ]; do echo "line $i"; i=$((i+1)); done > big; `;

const run = async (script: string, user?: number) => {
  const dir = user === undefined ? '/tmp/q' : '/tmp/qu';
  const command = ['sh', '-c', setup(dir) + script];
  return (await guest.client.exec('so', { command, ...(user === undefined ? {} : { user, group: user }) })).wait({ timeoutMs: 20_000 });
};

describe("one program's two streams under 2>&1", () => {
  for (const user of [undefined, 1000]) {
    const who = user === undefined ? 'root' : `user ${user}`;
    const q = user === undefined ? '/tmp/q' : '/tmp/qu';

    it(`cat, wc, ls, head and du interleave their messages with their output, through a pipe and a file (${who})`, async () => {
      const r = await run(
        [
          'cat f1 /nosuch f2 2>&1 | cat',
          `wc f1 /nosuch f2 >${q}/o 2>&1; cat ${q}/o`,
          `ls /nosuch ${q}/d1 f1 2>&1 | cat`,
          'head -n1 f1 /nosuch f2 2>&1 | cat',
          'du -c f1 /nosuch f2 2>&1',
        ].join('; '),
        user,
      );
      expect(r).toMatchObject({ exitCode: 1, stderr: '' });
      expect(r.stdout).toBe(
        [
          'a',
          "cat: can't open '/nosuch': No such file or directory",
          'b',
          '        1         1         2 f1',
          'wc: /nosuch: No such file or directory',
          '        1         1         2 f2',
          '        2         2         4 total',
          'ls: /nosuch: No such file or directory',
          'f1',
          '',
          `${q}/d1:`,
          '==> f1 <==',
          'a',
          'head: /nosuch: No such file or directory',
          '',
          '==> f2 <==',
          'b',
          '4\tf1',
          'du: /nosuch: No such file or directory',
          '4\tf2',
          '8\ttotal',
          '',
        ].join('\n'),
      );
    });

    it(`rm, mkdir and cp say each operand's outcome in turn, also over 4 KiB of output (${who})`, async () => {
      const r = await run(
        [
          'cat big /nosuch big 2>&1 | grep -n nosuch',
          'rm -v f1 /nosuch 2>&1 | cat',
          'mkdir -v d2 /nosuch/a d3 2>&1 | cat',
          'x=$(cp -v f2 /nosuch d1 2>&1); echo "$x"',
        ].join('; '),
        user,
      );
      expect(r).toMatchObject({ exitCode: 0, stderr: '' });
      expect(r.stdout).toBe(
        [
          "701:cat: can't open '/nosuch': No such file or directory",
          "removed 'f1'",
          "rm: can't remove '/nosuch': No such file or directory",
          "created directory: 'd2'",
          "mkdir: can't create directory '/nosuch/a': No such file or directory",
          "created directory: 'd3'",
          "'f2' -> 'd1/f2'",
          "cp: can't stat '/nosuch': No such file or directory",
          '',
        ].join('\n'),
      );
    });
  }
});

describe('a message before the output', () => {
  it("md5sum, grep, stat, find and tar say a missing first operand before the next one's output", async () => {
    const r = await run(
      [
        'md5sum /nosuch f1 2>&1 | cat',
        'grep a /nosuch f1 2>&1 | cat',
        'stat -c %n /nosuch f1 2>&1 | cat',
        'find /nosuch /tmp/q/d1 2>&1 | cat',
        'tar cvf /tmp/q/t.tar /nosuch f1 2>&1 | cat',
      ].join('; '),
    );
    expect(r).toMatchObject({ exitCode: 0, stderr: '' });
    expect(r.stdout).toBe(
      [
        "md5sum: can't open '/nosuch': No such file or directory",
        '60b725f10c9c85c70d97880dfe8191b3  f1',
        'grep: /nosuch: No such file or directory',
        'f1:a',
        "stat: can't stat '/nosuch': No such file or directory",
        'f1',
        'find: /nosuch: No such file or directory',
        '/tmp/q/d1',
        'tar: /nosuch: No such file or directory',
        'f1',
        'tar: error exit delayed from previous errors',
        '',
      ].join('\n'),
    );
  });
});

describe('exec 2>&1 points stderr at the shell stdout as it was then', () => {
  it('a command in a pipeline, a redirected group or a command substitution writes its messages there, not down the pipe', async () => {
    const r = await guest.sh(
      [
        'exec 2>&1',
        'ls /nosuch | wc -l',
        '{ echo a; ls /nosuch2; echo b; } > /tmp/g; echo --; cat /tmp/g',
        'x=$(ls /nosuch3); echo "[$x]"',
        'echo e >&2 | wc -l',
        'ls /nosuch4 2>&1 | wc -l',
      ].join('; '),
    );
    expect(r).toMatchObject({ exitCode: 0, stderr: '' });
    expect(r.stdout).toBe(
      [
        'ls: /nosuch: No such file or directory',
        '0',
        'ls: /nosuch2: No such file or directory',
        '--',
        'a',
        'b',
        'ls: /nosuch3: No such file or directory',
        '[]',
        'e',
        '0',
        '1',
        '',
      ].join('\n'),
    );
  });

  it('exec 2>FILE sends a piped command its messages to the file', async () => {
    const r = await guest.sh('exec 2>/tmp/e; ls /nosuch | wc -l; echo ---; cat /tmp/e');
    expect(r).toMatchObject({ exitCode: 0, stderr: '', stdout: '0\n---\nls: /nosuch: No such file or directory\n' });
  });
});
