import { machine, release, version } from 'node:os';
import { expect, it } from 'vitest';
import { conformance, launchPerSuite, launchPerTest, printing, transportConformance } from './targets.js';

await transportConformance('exec: a non-interactive command with its exit code, bounded output and a timeout', (target) => {
  const launch = launchPerTest(target);
  it("runs sh -c 'echo out; echo err >&2; exit 3': stdout, stderr and exit code 3 apart", async () => {
    const t = target();
    const name = await launch();
    const res = await printing(
      t,
      async () => (await t.client.exec(name, { command: ['sh', '-c', 'echo out; echo err >&2; exit 3'] })).wait({ timeoutMs: 20_000 }),
      ['stdout', 'stderr'],
    );
    expect(res).toMatchObject({ exitCode: 3, stdout: 'out\n', stderr: 'err\n', timedOut: false, stdoutTruncated: false, stderrTruncated: false });
    expect(res.operation.status_code).toBe(200);
  });

  it('keeps the first maxOutputBytes of a stream and says it was truncated', async () => {
    const t = target();
    const name = await launch();
    const res = await printing(t, async () =>
      (await t.client.exec(name, { command: ['echo', 'abcdefghij'] }, { maxOutputBytes: 4 })).wait({ timeoutMs: 20_000 }),
    );
    expect(res).toMatchObject({ exitCode: 0, stdout: 'abcd', stdoutBytes: 11, stdoutTruncated: true });
  });

  it('passes environment and cwd (container_exec_user_group_cwd), and closes stdin', async () => {
    const t = target();
    const name = await launch();
    const env = await printing(t, async () =>
      (await t.client.exec(name, { command: ['env'], environment: { REFLEX_X: 'y1' } })).wait({ timeoutMs: 20_000 }),
    );
    expect(env.exitCode).toBe(0);
    expect(env.stdout.split('\n')).toContain('REFLEX_X=y1');
    const cwd = await printing(t, async () => (await t.client.exec(name, { command: ['pwd'], cwd: '/tmp' })).wait({ timeoutMs: 20_000 }));
    expect(cwd).toMatchObject({ exitCode: 0, stdout: '/tmp\n' });
    const id = await printing(t, async () =>
      (await t.client.exec(name, { command: ['id', '-u'], user: 1000, group: 1000 })).wait({ timeoutMs: 20_000 }),
    );
    expect(id).toMatchObject({ exitCode: 0, stdout: '1000\n' });
  });

  it('a command that outlives its timeout is killed (SIGKILL through the control socket): 137, timed out, soon', async () => {
    const t = target();
    const name = await launch();
    const started = Date.now();
    const session = await t.client.exec(name, { command: ['sleep', '30'] }, { timeoutMs: 1_000 });
    const res = await session.wait({ timeoutMs: 20_000 });
    expect(res).toMatchObject({ timedOut: true, exitCode: 137 });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('a killed command returns the output it wrote before the kill, with 137 (SIGKILL)', async () => {
    const t = target();
    const name = await launch();
    const script = ['sh', '-c', 'echo before; echo e1 >&2; printf nonl; exec sleep 30'];
    const timedOut = await printing(
      t,
      async () => (await t.client.exec(name, { command: script }, { timeoutMs: 1_500 })).wait({ timeoutMs: 30_000 }),
      ['stdout', 'stderr'],
    );
    expect(timedOut).toMatchObject({ timedOut: true, exitCode: 137, stdout: 'before\nnonl', stderr: 'e1\n' });
    expect(timedOut.operation.status_code).toBe(200);
  });

  it('an unknown program: the operation fails with "Command not found" and the exit code is still read (127)', async () => {
    const t = target();
    const name = await launch();
    const res = await (await t.client.exec(name, { command: ['no-such-program'] })).wait({ timeoutMs: 20_000 });
    expect(res.exitCode).toBe(127);
    expect(res.operation.status_code).toBe(400);
  });
});

/** One shell case of issue #28: the command, what the request adds, and what busybox sh in the real container answers. */
interface ShellCase {
  title: string;
  command: string[];
  request?: { environment?: Record<string, string>; cwd?: string; user?: number; group?: number };
  stdin?: string;
  /** Expected stdout; a function of the instance's name where the output names it. */
  stdout: string | ((name: string) => string);
  exitCode: number;
}

const sh = (script: string): string[] => ['sh', '-c', script];

/** The fifteen cases of issue #28, answered as LXD 5.0.2 and Incus 6.0.4 answer them over the busybox test image. */
const shellCases: ShellCase[] = [
  { title: 'a variable from the environment', command: sh('echo $FOO'), request: { environment: { FOO: 'bar' } }, stdout: 'bar\n', exitCode: 0 },
  { title: 'a pipe', command: sh('echo a | cat'), stdout: 'a\n', exitCode: 0 },
  { title: 'a redirection to a file, read back', command: sh('echo hi > /tmp/rt-shell-f; cat /tmp/rt-shell-f'), stdout: 'hi\n', exitCode: 0 },
  { title: 'env through grep', command: sh('env | grep ^FOO='), request: { environment: { FOO: 'bar' } }, stdout: 'FOO=bar\n', exitCode: 0 },
  { title: 'a for loop', command: sh('for i in 1 2 3; do echo "n$i"; done'), stdout: 'n1\nn2\nn3\n', exitCode: 0 },
  {
    title: 'test and [',
    command: sh('test -d /tmp && echo dir; test -f /nonexistent || echo nofile; [ 2 -gt 1 ]; echo $?'),
    stdout: 'dir\nnofile\n0\n',
    exitCode: 0,
  },
  { title: 'printf run directly', command: ['printf', '%s=%03d\\n', 'x', '7'], stdout: 'x=007\n', exitCode: 0 },
  {
    title: 'uname -a: the host kernel and the instance name',
    command: ['uname', '-a'],
    stdout: (name) => `Linux ${name} ${release()} ${version()} ${machine()} GNU/Linux\n`,
    exitCode: 0,
  },
  { title: 'kill of the shell itself: 128 + SIGTERM, nothing after', command: sh('kill -TERM $$; echo not reached'), stdout: '', exitCode: 143 },
  { title: 'kill -0 of init', command: sh('kill -0 1; echo $?'), stdout: '0\n', exitCode: 0 },
  { title: 'ls run directly', command: ['ls', '/'], stdout: 'bin\ndev\netc\nlinuxrc\nproc\nroot\nrun\nsbin\nsys\ntmp\nusr\nvar\n', exitCode: 0 },
  { title: 'cat run directly', command: ['cat', '/etc/passwd'], stdout: 'root:x:0:0:root:/root:/bin/sh\n', exitCode: 0 },
  { title: 'cat of stdin', command: ['cat'], stdin: 'payload\nline2\n', stdout: 'payload\nline2\n', exitCode: 0 },
  { title: 'an exit code through sh', command: sh('exit 42'), stdout: '', exitCode: 42 },
  { title: 'an exit code past 255 wraps', command: sh('exit 300'), stdout: '', exitCode: 44 },
  { title: 'false run directly', command: ['false'], stdout: '', exitCode: 1 },
  { title: "root's default cwd", command: ['pwd'], stdout: '/root\n', exitCode: 0 },
  { title: 'cwd', command: ['pwd'], request: { cwd: '/tmp' }, stdout: '/tmp\n', exitCode: 0 },
  { title: 'a relative cwd, from /', command: ['pwd'], request: { cwd: 'tmp/../etc' }, stdout: '/etc\n', exitCode: 0 },
  // liblxc's attach only warns when it cannot change to the cwd asked for: the command runs in /.
  {
    title: 'a cwd that does not exist: the command runs in /',
    command: sh('pwd; echo $PWD'),
    request: { cwd: '/rt-nosuch' },
    stdout: '/\n/\n',
    exitCode: 0,
  },
  { title: 'a cwd that is a file: the command runs in /', command: ['pwd'], request: { cwd: '/etc/passwd' }, stdout: '/\n', exitCode: 0 },
  { title: "another user's default cwd", command: ['pwd'], request: { user: 1000, group: 1000 }, stdout: '/\n', exitCode: 0 },
  { title: 'id of root', command: ['id'], stdout: 'uid=0(root) gid=0(root)\n', exitCode: 0 },
  {
    title: 'user and group: id, no HOME or USER, whoami fails',
    command: sh('id -u; id -g; whoami; echo $HOME $USER'),
    request: { user: 1000, group: 1000 },
    stdout: '1000\n1000\n\n',
    exitCode: 0,
  },
  { title: 'hostname is the instance name', command: ['hostname'], stdout: (name) => `${name}\n`, exitCode: 0 },
  // utimensat(2): a user who may write a file sets its times to now, but only its owner sets a time given.
  {
    title: "a user sets another's writable file's times to now (touch), not to a time given (touch -d)",
    command: sh(
      'touch /dev/null; echo $?; touch -d "2020-01-01 00:00" /dev/null 2>&1; echo $?; touch -m -d "2020-01-01 00:00" /dev/tty 2>&1; echo $?',
    ),
    request: { user: 1000, group: 1000 },
    stdout: '0\ntouch: /dev/null: Operation not permitted\n1\ntouch: /dev/tty: Operation not permitted\n1\n',
    exitCode: 0,
  },
];

await conformance('exec: the shell of the busybox guest (issue #28)', (target) => {
  const name = launchPerSuite(target);

  it.each(shellCases)('$title', async (c) => {
    const stdout = typeof c.stdout === 'string' ? c.stdout : c.stdout(name());
    const run = async () => {
      const session = await target().client.exec(name(), { command: c.command, ...c.request }, c.stdin === undefined ? {} : { stdin: c.stdin });
      return session.wait({ timeoutMs: 20_000 });
    };
    const res = stdout === '' ? await run() : await printing(target(), run, ['stdout'], stdout);
    expect({ stdout: res.stdout, exitCode: res.exitCode }).toEqual({ stdout, exitCode: c.exitCode });
  });

  it('an unknown program through sh: 127, "sh: X: not found", and the operation fails "Command not found"', async () => {
    const res = await printing(
      target(),
      async () => (await target().client.exec(name(), { command: sh('rt-no-such-program') })).wait({ timeoutMs: 20_000 }),
      ['stderr'],
      { stderr: 'sh: rt-no-such-program: not found\n' },
    );
    expect(res).toMatchObject({ exitCode: 127, stdout: '', stderr: 'sh: rt-no-such-program: not found\n' });
    expect(res.operation.err).toMatch(/Command not found$/);
  });

  it('a path that does not exist run as a program: 127 with no output, the operation fails "Command not found"', async () => {
    for (const path of ['/rt-nosuch', './rt-nosuch', '/bin/rt-nosuch/x']) {
      const res = await (await target().client.exec(name(), { command: [path] })).wait({ timeoutMs: 20_000 });
      expect({ path, exitCode: res.exitCode, stdout: res.stdout, stderr: res.stderr }).toEqual({ path, exitCode: 127, stdout: '', stderr: '' });
      expect(res.operation.err).toMatch(/Command not found$/);
    }
  });

  it('a directory run as a program: 126, the operation fails "Command not executable"', async () => {
    const res = await (await target().client.exec(name(), { command: ['/tmp'] })).wait({ timeoutMs: 20_000 });
    expect(res.exitCode).toBe(126);
    expect(res.operation.err).toMatch(/Command not executable$/);
  });
});
