import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InstanceClient } from '../../src/client/client.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { fastTimings } from './sim-client.js';

/**
 * The guest's uncompress, unlzma, lzcat, lzma and lzop (issue #41 item 5) on the simulator alone,
 * for what the lxc differential's busybox lines (which hold their bytes, messages and exit codes to
 * LXD 5.0.2, as root) cannot show there: what a user other than root makes with them, a binary
 * file kept whole, and `busybox --list`.
 */
let sim: RunningSimulator;
let client: InstanceClient;

beforeAll(async () => {
  sim = await startSimulator({ timings: fastTimings });
  client = new InstanceClient({ kind: 'unix', socketPath: sim.socketPath!, url: `unix://${sim.socketPath}` });
  sim.controls.addInstance({ name: 'lz', status: 'Running', config: { 'raw.lxc': 'lxc.init.cmd=/sbin/testinit' } });
});

afterAll(async () => {
  await client?.close();
  await sim?.stop();
});

const sh = async (script: string, user?: number) =>
  (await client.exec('lz', { command: ['sh', '-c', script], ...(user === undefined ? {} : { user, group: user }) })).wait({ timeoutMs: 20_000 });

/** `hello` as ncompress and `xz --format=lzma` make it on the host. */
const helloZ = 'H52QaMqwYfNGAQ==';
const helloLzma = 'XQAAgAD//////////wA0GUnujd09Ot///90SAAA=';

describe('the guest’s LZ programs', () => {
  it('busybox --list names uncompress, unlzma, lzcat, lzma and lzop', async () => {
    const listed = (await sh('busybox --list')).stdout.split('\n');
    for (const name of ['uncompress', 'unlzma', 'lzcat', 'lzma', 'lzop']) expect(listed).toContain(name);
  });

  it('lzop keeps every byte of a binary file, and what a user other than root makes with these programs is its own', async () => {
    const res = await sh(
      'mkdir -p /tmp/u && cd /tmp/u && printf "\\000\\001\\177\\200\\237\\300\\376\\377abc\\n\\r" > bin && lzop bin && ' +
        `lzop -dc bin.lzo | cmp - bin && echo same && echo ${helloZ} | base64 -d > h.Z && uncompress h.Z && ` +
        `echo ${helloLzma} | base64 -d > l.lzma && unlzma l.lzma && stat -c "%u %n" bin.lzo h l`,
      1000,
    );
    expect(res.stderr).toBe('');
    expect(res.stdout).toBe('same\n1000 bin.lzo\n1000 h\n1000 l\n');
  });
});
