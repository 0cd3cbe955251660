import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InstanceClient } from '../../src/client/client.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { fastTimings } from './sim-client.js';

/**
 * The busybox programs on archives and files that the guest runs (issue #41 item 5), on the
 * simulator alone: bytes kept whole through them, what a user other than root makes with them, and
 * `busybox --list`. Their output, messages and exit codes are held to LXD 5.0.2 by the lxc
 * differential's busybox lines (test/lxc-client/differential-scenario.ts).
 */
let sim: RunningSimulator;
let client: InstanceClient;

beforeAll(async () => {
  sim = await startSimulator({ timings: fastTimings });
  client = new InstanceClient({ kind: 'unix', socketPath: sim.socketPath!, url: `unix://${sim.socketPath}` });
  sim.controls.addInstance({ name: 'ar', status: 'Running', config: { 'raw.lxc': 'lxc.init.cmd=/sbin/testinit' } });
});

afterAll(async () => {
  await client?.close();
  await sim?.stop();
});

const sh = async (script: string, user?: number) =>
  (await client.exec('ar', { command: ['sh', '-c', script], ...(user === undefined ? {} : { user, group: user }) })).wait({ timeoutMs: 20_000 });

/** A binary file: NUL, control bytes, bytes past ASCII and invalid UTF-8 (a tarball's, a key's). */
const binary = 'printf "\\000\\001\\010\\177\\200\\201\\237\\240\\300\\341\\376\\377abc\\n\\r" > /tmp/bin';

describe('the guest’s archive programs', () => {
  it('bzip2, cpio and uuencode keep every byte of a binary file', async () => {
    const res = await sh(
      `${binary}; wc -c < /tmp/bin; bzip2 -c /tmp/bin | bunzip2 | cmp - /tmp/bin && echo bz; ` +
        'cd /tmp; echo bin | cpio -o -H newc > /tmp/b.cpio; mkdir x; cd x; cpio -i < /tmp/b.cpio 2>/dev/null; cmp bin /tmp/bin && echo cpio; ' +
        'uuencode /tmp/bin b | uudecode -o - | cmp - /tmp/bin && echo uu; uuencode -m /tmp/bin b | uudecode -o - | cmp - /tmp/bin && echo b64',
    );
    expect(res.stderr).toBe('');
    expect(res.stdout).toBe('17\nbz\ncpio\nuu\nb64\n');
  });

  it('what a user other than root extracts, patches, compresses or makes is its own', async () => {
    const res = await sh(
      'mkdir -p /tmp/u && cd /tmp/u && echo one > a && echo a | cpio -o -H newc > a.cpio && mkdir e && cd e && cpio -i < ../a.cpio 2>/dev/null; ' +
        'printf -- "--- a\\n+++ a\\n@@ -1 +1 @@\\n-one\\n+two\\n" | patch; cat a; bzip2 a; mkfifo f; stat -c "%u %n" a.bz2 f',
      1000,
    );
    expect(res.stdout).toBe('patching file a\ntwo\n1000 a.bz2\n1000 f\n');
    expect(res.exitCode).toBe(0);
  });

  it('crontab keeps a table per user, named after the user running it', async () => {
    const res = await sh(
      'mkdir -p /var/spool/cron/crontabs; echo "5 4 * * * backup" | crontab -; crontab -l; crontab -u root -l; ' +
        'ls /var/spool/cron/crontabs; stat -c "%a" /var/spool/cron/crontabs/root; crontab -e; echo $?',
    );
    expect(res.stdout).toBe('5 4 * * * backup\n5 4 * * * backup\ncron.update\nroot\n600\n1\n');
    expect(res.stderr).toBe('crontab: -e needs a terminal, which the simulator does not have\n');
  });

  it('busybox --list names the programs added for archives, patches, nodes and small file tools', async () => {
    const res = await sh('busybox --list');
    const listed = res.stdout.split('\n');
    for (const name of [
      'unzip',
      'cpio',
      'ar',
      'bzip2',
      'bunzip2',
      'bzcat',
      'xz',
      'unxz',
      'xzcat',
      'patch',
      'mkfifo',
      'mknod',
      'crontab',
      'run-parts',
      'uuencode',
      'uudecode',
      'crc32',
      'factor',
      'fallocate',
      'shred',
      'nuke',
      'nologin',
      'dnsdomainname',
      'last',
      'ts',
      'ascii',
      'cal',
      'ipcalc',
      'dumpleases',
      'mkpasswd',
    ])
      expect(listed).toContain(name);
  });
});
