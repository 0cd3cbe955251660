import { expect, it } from 'vitest';
import { conformance } from './targets.js';

await conformance('exec: a non-interactive command with its exit code, bounded output and a timeout', (target) => {
  it("runs sh -c 'echo out; echo err >&2; exit 3': stdout, stderr and exit code 3 apart", async () => {
    const t = target();
    const name = await t.launch();
    try {
      const session = await t.client.exec(name, { command: ['sh', '-c', 'echo out; echo err >&2; exit 3'] });
      const res = await session.wait({ timeoutMs: 20_000 });
      expect(res).toMatchObject({ exitCode: 3, stdout: 'out\n', stderr: 'err\n', timedOut: false, stdoutTruncated: false, stderrTruncated: false });
      expect(res.operation.status_code).toBe(200);
    } finally {
      await t.remove(name);
    }
  });

  it('keeps the first maxOutputBytes of a stream and says it was truncated', async () => {
    const t = target();
    const name = await t.launch();
    try {
      const session = await t.client.exec(name, { command: ['echo', 'abcdefghij'] }, { maxOutputBytes: 4 });
      const res = await session.wait({ timeoutMs: 20_000 });
      expect(res).toMatchObject({ exitCode: 0, stdout: 'abcd', stdoutBytes: 11, stdoutTruncated: true });
    } finally {
      await t.remove(name);
    }
  });

  it('passes environment and cwd (container_exec_user_group_cwd), and closes stdin', async () => {
    const t = target();
    const name = await t.launch();
    try {
      const env = await (await t.client.exec(name, { command: ['env'], environment: { REFLEX_X: 'y1' } })).wait({ timeoutMs: 20_000 });
      expect(env.exitCode).toBe(0);
      expect(env.stdout.split('\n')).toContain('REFLEX_X=y1');
      const cwd = await (await t.client.exec(name, { command: ['pwd'], cwd: '/tmp' })).wait({ timeoutMs: 20_000 });
      expect(cwd).toMatchObject({ exitCode: 0, stdout: '/tmp\n' });
      const id = await (await t.client.exec(name, { command: ['id', '-u'], user: 1000, group: 1000 })).wait({ timeoutMs: 20_000 });
      expect(id).toMatchObject({ exitCode: 0, stdout: '1000\n' });
    } finally {
      await t.remove(name);
    }
  });

  it('a command that outlives its timeout is killed (SIGKILL through the control socket): 137, timed out, soon', async () => {
    const t = target();
    const name = await t.launch();
    try {
      const started = Date.now();
      const session = await t.client.exec(name, { command: ['sleep', '30'] }, { timeoutMs: 1_000 });
      const res = await session.wait({ timeoutMs: 20_000 });
      expect(res).toMatchObject({ timedOut: true, exitCode: 137 });
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      await t.remove(name);
    }
  });

  it('an unknown program: the operation fails with "Command not found" and the exit code is still read (127)', async () => {
    const t = target();
    const name = await t.launch();
    try {
      const res = await (await t.client.exec(name, { command: ['no-such-program'] })).wait({ timeoutMs: 20_000 });
      expect(res.exitCode).toBe(127);
      expect(res.operation.status_code).toBe(400);
    } finally {
      await t.remove(name);
    }
  });
});
