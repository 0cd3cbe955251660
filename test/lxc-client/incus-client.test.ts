import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { LxcCli, lxcInstalled } from '../support/lxc-cli.js';
import { fastTimings } from '../simulator/sim-client.js';

let sim: RunningSimulator;
let incus: LxcCli;

/** Runs with the `incus` client (CI installs it with the Incus test bed); skipped without it unless REFLEX_REQUIRE_INCUS=1. */
const suite = lxcInstalled('incus') || process.env.REFLEX_REQUIRE_INCUS === '1' ? describe : describe.skip;

suite('the real incus client against reflex sim', () => {
  beforeEach(() => {
    incus = new LxcCli({ client: 'incus' });
  });
  afterEach(async () => {
    await sim?.stop();
    incus.close();
  });

  for (const revision of ['later', 'earlier'] as const) {
    it(`incus remote add with a trust token works against the ${revision} revision, then list and exec`, async () => {
      sim = await startSimulator({ listen: ['https://127.0.0.1:0'], revision, timings: fastTimings });
      sim.controls.addInstance({ name: 'c1' });
      const add = await incus.run(['remote', 'add', 'sim', sim.controls.issueToken('ci')]);
      expect(add.stderr).not.toMatch(/Error/);
      expect(add.code).toBe(0);
      expect(await incus.ok(['list', 'sim:', '--format', 'csv', '-c', 'ns'])).toBe('c1,RUNNING\n');
      expect(await incus.run(['exec', 'sim:c1', '--', 'sh', '-c', 'echo hi; exit 3'])).toMatchObject({ stdout: 'hi\n', code: 3 });
    });
  }

  it('incus file push, pull, pull -r, edit and delete go over SFTP (GET /1.0/instances/c1/sftp upgraded), as on Incus 6.0.4', async () => {
    sim = await startSimulator({ listen: ['https://127.0.0.1:0'], revision: 'later', timings: fastTimings });
    sim.controls.addInstance({ name: 'c1' });
    await incus.ok(['remote', 'add', 'sim', sim.controls.issueToken('ci')]);
    const local = join(incus.confDir, 'files');
    mkdirSync(local);
    writeFileSync(join(local, 'a'), 'bytes \xff\n', 'latin1');
    await incus.ok(['file', 'push', '--uid', '33', '--gid', '34', '--mode', '0640', join(local, 'a'), 'sim:c1/tmp/a']);
    expect(await incus.ok(['exec', 'sim:c1', '--', 'stat', '-c', '%u %g %a %s', '/tmp/a'])).toBe('33 34 640 8\n');
    await incus.ok(['file', 'push', '-p', join(local, 'a'), 'sim:c1/tmp/d/sub/b']);
    await incus.ok(['file', 'pull', '-r', 'sim:c1/tmp/d', local]);
    expect(readFileSync(join(local, 'd', 'sub', 'b'), 'latin1')).toBe('bytes \xff\n');
    await incus.ok(['file', 'edit', 'sim:c1/tmp/a'], { input: 'edited\n' });
    expect(await incus.ok(['file', 'pull', 'sim:c1/tmp/a', '-'])).toBe('edited\n');
    expect(await incus.run(['file', 'delete', 'sim:c1/tmp/d'])).toMatchObject({
      stderr: 'Error: sftp: "remove tmp/d: directory not empty" (SSH_FX_FAILURE)\n',
      code: 1,
    });
    await incus.ok(['file', 'delete', '-f', 'sim:c1/tmp/d']);
    await incus.ok(['file', 'delete', 'sim:c1/tmp/a']);
    expect(await incus.run(['file', 'pull', 'sim:c1/tmp/a', '-'])).toMatchObject({ stderr: 'Error: file does not exist\n', code: 1 });
    expect(await incus.run(['exec', 'sim:c1', '--', 'ls', '/tmp'])).toMatchObject({ stdout: '', code: 0 });
    expect(await incus.run(['file', 'pull', 'sim:nosuch/etc/hostname', '-'])).toMatchObject({
      stderr: 'Error: Failed to fetch instance "nosuch" in project "default": Instance not found\n',
      code: 1,
    });
  });

  it('the later revision answers incus as Incus 6.0 does: profile keys checked, profile project, Last Used from creation, new project features, busybox cat', async () => {
    sim = await startSimulator({ listen: ['https://127.0.0.1:0'], revision: 'later', timings: fastTimings });
    sim.controls.addInstance({ name: 'c1' });
    await incus.ok(['remote', 'add', 'sim', sim.controls.issueToken('ci')]);
    await incus.ok(['profile', 'create', 'sim:p1']);
    expect(await incus.run(['profile', 'set', 'sim:p1', 'bogus.key', 'yes'])).toMatchObject({
      stderr: 'Error: Unknown configuration key: bogus.key\n',
      code: 1,
    });
    expect(await incus.ok(['profile', 'show', 'sim:p1'])).toMatch(/^project: default$/m);
    await incus.ok(['init', 'sim:busybox', 'sim:c2']);
    expect(await incus.ok(['info', 'sim:c2'])).toMatch(/^Last Used: /m);
    await incus.ok(['project', 'create', 'sim:p2']);
    expect(await incus.ok(['project', 'get', 'sim:p2', 'features.storage.buckets'])).toBe('true\n');
    expect(await incus.run(['exec', 'sim:c1', '--', 'cat', '/nonexistent'])).toMatchObject({
      stderr: "cat: can't open '/nonexistent': No such file or directory\n",
      code: 1,
    });
  });
});
