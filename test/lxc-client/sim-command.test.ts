import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import { afterEach, expect, it } from 'vitest';
import { LxcCli } from '../support/lxc-cli.js';
import { describeLxcClient } from './sim-remote.js';

const entry = join(import.meta.dirname, 'sim-cli-entry.ts');
let child: ChildProcess | undefined;
let lxc: LxcCli | undefined;

afterEach(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  lxc?.close();
});

/** Starts `reflex sim ARGS` and resolves with its stdout once it printed `lines` lines. */
async function startSim(args: string[], lines: number): Promise<string[]> {
  child = spawn(process.execPath, ['--import', 'tsx', entry, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`reflex sim printed ${JSON.stringify(out)} ${err}`)), 30_000);
    child!.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const got = out.split('\n').filter(Boolean);
      if (got.length >= lines) {
        clearTimeout(timer);
        resolve(got);
      }
    });
    child!.once('exit', (code) => reject(new Error(`reflex sim exited ${code}: ${err}`)));
  });
}

describeLxcClient('reflex sim trust options, used by the real lxc client', () => {
  it('--trust-password lets `lxc remote add --password` in, and --token prints a token `lxc remote add` accepts', async () => {
    const printed = await startSim(
      [
        '--listen',
        `unix:${join(tmpdir(), `reflex-sim-cli-${process.pid}.sock`)}`,
        '--listen',
        'https://127.0.0.1:0',
        '--trust-password',
        'pw',
        '--token',
        'ci',
      ],
      4,
    );
    // Each listener, the guest port, then the token, one line each: found by what they say.
    const https = printed.find((l) => l.startsWith('reflex sim listening on https'));
    const tokenLine = printed.find((l) => l.startsWith('reflex sim trust token'));
    const url = https!.replace('reflex sim listening on ', '');
    expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(tokenLine).toMatch(/^reflex sim trust token: [A-Za-z0-9+/=]+$/);
    lxc = new LxcCli();
    expect((await lxc.run(['remote', 'add', 'bypw', url, '--password', 'pw', '--accept-certificate'])).code).toBe(0);
    const other = new LxcCli();
    try {
      const add = await other.run(['remote', 'add', 'bytoken', tokenLine!.split(': ')[1]!]);
      expect(add.stderr).not.toMatch(/Error/);
      expect(add.code).toBe(0);
      expect((await other.run(['list', 'bytoken:'])).code).toBe(0);
    } finally {
      other.close();
    }
  });

  it('--trust-certificate trusts a client certificate from a file', async () => {
    lxc = new LxcCli();
    const pair = await generate([{ name: 'commonName', value: 'ci' }], { keySize: 2048 } as Parameters<typeof generate>[1]);
    writeFileSync(join(lxc.confDir, 'client.crt'), pair.cert);
    writeFileSync(join(lxc.confDir, 'client.key'), pair.private);
    const [https] = await startSim(['--listen', 'https://127.0.0.1:0', '--trust-certificate', join(lxc.confDir, 'client.crt')], 1);
    const url = https!.replace('reflex sim listening on ', '');
    expect((await lxc.run(['remote', 'add', 'sim', url, '--accept-certificate'])).code).toBe(0);
    expect(await lxc.ok(['query', 'sim:/1.0/projects'])).toContain('/1.0/projects/default');
  });
});
