import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeBed, lxdBed } from '../support/daemon-bed.js';
import { describeLxcClient, startSimRemote, type SimRemote } from './sim-remote.js';

/**
 * `ls` on a terminal (`lxc exec c -- sh` from a pty, pty-exec.py): busybox lays names out in
 * columns to the terminal's width less one, down (`-x`: across), a column as wide as the longest
 * name and two spaces (and the block counts of `-s`), one name a line when two columns do not fit;
 * off a terminal it prints one name a line (the lxc differential holds that). The transcript is
 * LXD 5.0.2's, byte for byte.
 */
const script = join(import.meta.dirname, 'pty-exec.py');

const banner = "\r\n\r\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) built-in shell (ash)\r\nEnter 'help' for a list of built-in commands.\r\n\r\n";
const p = '/tmp/rt-lsp # \x1b[6n';
const steps = [
  '@size 24 50',
  'mkdir /tmp/rt-lsp; cd /tmp/rt-lsp',
  'touch a bb ccc dddd eeeee ffffff',
  'touch ggggggg hhhhhhhh iiiiiiiii',
  'touch jjjjjjjjjj; mkdir k',
  'ls',
  'ls -s',
  'ls -x',
  'ls -w 60',
  '@resize 24 21',
  'ls -p',
  '@resize 24 50',
  'cd /; rm -r /tmp/rt-lsp',
  'exit',
];
const transcript =
  '~ # \x1b[6nmkdir /tmp/rt-lsp; cd /tmp/rt-lsp\r\n' +
  `${p}touch a bb ccc dddd eeeee ffffff\r\n` +
  `${p}touch ggggggg hhhhhhhh iiiiiiiii\r\n` +
  `${p}touch jjjjjjjjjj; mkdir k\r\n` +
  `${p}ls\r\na           dddd        ggggggg     jjjjjjjjjj\r\nbb          eeeee       hhhhhhhh    k\r\nccc         ffffff      iiiiiiiii\r\n` +
  `${p}ls -s\r\ntotal 4\r\n     0 a              0 ggggggg\r\n     0 bb             0 hhhhhhhh\r\n     0 ccc            0 iiiiiiiii\r\n` +
  '     0 dddd           0 jjjjjjjjjj\r\n     0 eeeee          4 k\r\n     0 ffffff\r\n' +
  `${p}ls -x\r\na           bb          ccc         dddd\r\neeeee       ffffff      ggggggg     hhhhhhhh\r\niiiiiiiii   jjjjjjjjjj  k\r\n` +
  `${p}ls -w 60\r\na           dddd        ggggggg     jjjjjjjjjj\r\nbb          eeeee       hhhhhhhh    k\r\nccc         ffffff      iiiiiiiii\r\n` +
  `${p}\r/tmp/rt-lsp # \x1b[Jls -p\r\na\r\nbb\r\nccc\r\ndddd\r\neeeee\r\nffffff\r\nggggggg\r\nhhhhhhhh\r\niiiiiiiii\r\njjjjjjjjjj\r\nk/\r\n` +
  `${p}\r/tmp/rt-lsp # \x1b[Jcd /; rm -r /tmp/rt-lsp\r\n` +
  '/ # \x1b[6nexit\r\n';

async function session(t: SimRemote, target: string): Promise<{ transcript: string; code: number }> {
  const { stdout } = await promisify(execFile)('python3', [script, 'lxc', target, ...steps], {
    env: { ...process.env, LXD_CONF: t.lxc.confDir, LC_ALL: 'C', TERM: 'xterm' },
    timeout: 90_000,
  });
  return JSON.parse(stdout) as { transcript: string; code: number };
}

describeLxcClient('ls on a terminal against the simulator', () => {
  let t: SimRemote;
  beforeAll(async () => {
    t = await startSimRemote({ trustPassword: 's3cret' });
    await t.lxc.ok(['remote', 'add', 'sim', t.sim.httpsUrl!, '--password', 's3cret', '--accept-certificate']);
    t.sim.controls.addInstance({ name: 'c1' });
  });
  afterAll(async () => t?.close());

  it('lays names out in columns to the terminal’s width, as busybox', async () => {
    expect(await session(t, 'sim:c1')).toEqual({ transcript: banner + transcript, code: 0 });
  }, 120_000);
});

await describeBed(lxdBed, 'ls on a terminal: the same transcript from LXD 5.0.2', () => {
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

  it('lays names out in columns to the terminal’s width', async () => {
    expect(await session(real, `local:${name}`)).toEqual({ transcript: banner + transcript, code: 0 });
  }, 120_000);
});
