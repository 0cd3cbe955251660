import { spawn } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeLxcClient, startSimRemote, type SimRemote } from './sim-remote.js';

let t: SimRemote;

/**
 * `lxc exec` without a terminal, its stdin a pipe that brings a script line by line: the real
 * daemons (LXD 5.0.2, Incus 6.0.4, by hand on the test beds) run every line, `a b` and exit 3; the
 * simulator ran the shell a second after the sockets connected with the first line only (`a`, 0).
 * Issue #41 item 4.
 */
function execFedSlowly(t: SimRemote, lines: string[], gapMs: number): Promise<{ stdout: string; code: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn('lxc', ['exec', 'sim:c1', '--', 'sh'], { env: { ...process.env, LXD_CONF: t.lxc.confDir, LC_ALL: 'C' } });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ stdout, code: code ?? -1 }));
    const feed = (i: number): void => {
      if (i === lines.length) return void child.stdin.end();
      child.stdin.write(lines[i]);
      setTimeout(() => feed(i + 1), gapMs);
    };
    feed(0);
  });
}

describeLxcClient('lxc exec with stdin fed over time', () => {
  beforeAll(async () => {
    t = await startSimRemote({ trustPassword: 's3cret' });
    await t.lxc.ok(['remote', 'add', 'sim', t.sim.httpsUrl!, '--password', 's3cret', '--accept-certificate']);
    t.sim.controls.addInstance({ name: 'c1' });
  });
  afterAll(async () => t?.close());

  it('runs every line a pipe brings before it ends, as the daemons do: a b, exit 3', async () => {
    expect(await execFedSlowly(t, ['echo a\n', 'echo b; exit 3\n'], 1_500)).toEqual({ stdout: 'a\nb\n', code: 3 });
  }, 30_000);
});
