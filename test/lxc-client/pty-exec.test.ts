import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeBed, lxdBed } from '../support/daemon-bed.js';
import { describeLxcClient, startSimRemote, type SimRemote } from './sim-remote.js';

/**
 * `lxc exec c -- sh` from a terminal (issue #41 item 4): the client sees a pty (Python's pty
 * module drives it, pty-exec.py), so the exec is interactive and the shell reads the terminal line
 * by line. On LXD 5.0.2 busybox ash prints its banner and a prompt naming the directory, echoes
 * what is typed, runs each line, and `exit 3` ends it with 3; the simulator answered nothing and 0.
 */
const script = join(import.meta.dirname, 'pty-exec.py');
const lines = ['echo hi', 'x=kept; cd /tmp', 'pwd; echo $x', 'nosuchcmd', 'exit 3'];

async function session(t: SimRemote, target: string): Promise<{ transcript: string; code: number }> {
  const { stdout } = await promisify(execFile)('python3', [script, 'lxc', target, ...lines], {
    env: { ...process.env, LXD_CONF: t.lxc.confDir, LC_ALL: 'C' },
    timeout: 60_000,
  });
  return JSON.parse(stdout) as { transcript: string; code: number };
}

const expected =
  "\r\n\r\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) built-in shell (ash)\r\nEnter 'help' for a list of built-in commands.\r\n\r\n" +
  '~ # \x1b[6necho hi\r\nhi\r\n' +
  '~ # \x1b[6nx=kept; cd /tmp\r\n' +
  '/tmp # \x1b[6npwd; echo $x\r\n/tmp\r\nkept\r\n' +
  '/tmp # \x1b[6nnosuchcmd\r\nsh: nosuchcmd: not found\r\n' +
  '/tmp # \x1b[6nexit 3\r\n';

let t: SimRemote;

describeLxcClient('lxc exec -- sh on a terminal against the simulator', () => {
  beforeAll(async () => {
    t = await startSimRemote({ trustPassword: 's3cret' });
    await t.lxc.ok(['remote', 'add', 'sim', t.sim.httpsUrl!, '--password', 's3cret', '--accept-certificate']);
    t.sim.controls.addInstance({ name: 'c1' });
  });
  afterAll(async () => t?.close());

  it('is an interactive shell: banner, prompt, echo, each line run in the state the last left, exit 3', async () => {
    expect(await session(t, 'sim:c1')).toEqual({ transcript: expected, code: 3 });
  }, 60_000);
});

await describeBed(lxdBed, 'lxc exec -- sh on a terminal: the same transcript from LXD 5.0.2', () => {
  let real: SimRemote;
  let name = '';
  beforeAll(async () => {
    real = await startSimRemote({});
    // The client's first run in a fresh config directory prints a welcome first: have it now.
    await real.lxc.run(['list', 'local:', '--format', 'csv', '-c', 'n']);
    name = await lxdBed.launch();
  }, 120_000);
  afterAll(async () => {
    if (name) await lxdBed.remove(name);
    await real?.close();
  });

  it('prints the transcript the simulator prints', async () => {
    expect(await session(real, `local:${name}`)).toEqual({ transcript: expected, code: 3 });
  }, 60_000);
});
