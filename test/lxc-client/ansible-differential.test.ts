import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeBed, lxdBed, TEST_IMAGE } from '../support/daemon-bed.js';
import { startSimRemote, type SimRemote } from './sim-remote.js';

/**
 * Ansible's `community.general.lxd` connection plugin (Debian's `ansible` package: ansible-core
 * 2.14 with community.general 6) runs one playbook (ansible/playbook.yml: raw, script, command,
 * copy, fetch, file, template) against an instance on the real LXD 5.0.2 (remote `local`) and one
 * on the simulator (remote `sim`), through the real `lxc` client the plugin shells out to; every
 * task's result must be the same on both (the instance name and Ansible's temporary paths masked).
 */
const playbookDir = join(import.meta.dirname, 'ansible');
/** Debian's ansible package puts it here. */
const ansiblePlaybook = '/usr/bin/ansible-playbook';
const hasAnsible = spawnSync(ansiblePlaybook, ['--version'], { stdio: 'ignore' }).status === 0;

/** What is compared of a task's result: how it ended and what it said. */
interface TaskOutcome {
  task: string;
  result: Record<string, unknown>;
}

const compared = ['failed', 'changed', 'rc', 'msg', 'stdout', 'stderr', 'module_stdout', 'module_stderr', 'skipped', 'unreachable'];

function playbook(t: SimRemote, remote: string, name: string, fetchDir: string): Promise<TaskOutcome[]> {
  return new Promise((resolve, reject) => {
    // Asynchronous: the simulator answers from this process while the playbook runs.
    const child = spawn(
      ansiblePlaybook,
      ['-i', `${name},`, '-e', `ansible_connection=community.general.lxd ansible_lxd_remote=${remote} fetch_dir=${fetchDir}`, 'playbook.yml'],
      {
        cwd: playbookDir,
        env: {
          ...process.env,
          LXD_SOCKET: lxdBed.socket,
          LXD_CONF: t.lxc.confDir,
          ANSIBLE_STDOUT_CALLBACK: 'json',
          ANSIBLE_LOCAL_TEMP: join(t.lxc.confDir, 'ansible-local'),
          ANSIBLE_NOCOLOR: '1',
          LC_ALL: 'C.UTF-8',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => {
      try {
        const report = JSON.parse(stdout) as { plays: { tasks: { task: { name: string }; hosts: Record<string, Record<string, unknown>> }[] }[] };
        resolve(
          report.plays[0]!.tasks.map(({ task, hosts }) => {
            const raw = hosts[name] ?? {};
            const result = Object.fromEntries(compared.filter((k) => raw[k] !== undefined).map((k) => [k, mask(raw[k], name)]));
            return { task: task.name, result };
          }),
        );
      } catch {
        reject(new Error(`ansible-playbook against ${remote} exited ${code}: ${stderr || stdout}`));
      }
    });
  });
}

/** The instance's name and Ansible's per-run temporary names differ by nature. */
function mask(value: unknown, name: string): unknown {
  if (typeof value !== 'string') return value;
  return value
    .replaceAll(name, '<instance>')
    .replace(/ansible-tmp-[\d.]+-\d+-\d+/g, 'ansible-tmp-<n>')
    .replace(/AnsiballZ_\w+\.py/g, 'AnsiballZ_<module>.py');
}

if (!hasAnsible && process.env.REFLEX_REQUIRE_LXD !== '1') {
  describe.skip('Ansible differential', () => it('needs ansible (apt-get install ansible)', () => undefined));
} else {
  await describeBed(lxdBed, "Ansible's community.general.lxd connection gets the same task results from the simulator as from LXD 5.0.2", () => {
    let t: SimRemote;
    const name = `rt-ansible-${randomBytes(3).toString('hex')}`;
    let outcomes: { real: TaskOutcome[]; sim: TaskOutcome[] };

    beforeAll(async () => {
      if (!hasAnsible) throw new Error('ansible is not installed (apt-get install ansible; .ci/run installs it)');
      t = await startSimRemote({ trustPassword: 'ansible' });
      await t.lxc.ok(['remote', 'add', 'sim', t.sim.httpsUrl!, '--password', 'ansible', '--accept-certificate']);
      for (const remote of ['local', 'sim'])
        await t.lxc.ok(['launch', `${remote}:${TEST_IMAGE}`, `${remote}:${name}`, '-c', 'raw.lxc=lxc.init.cmd=/sbin/testinit']);
      const fetched = (side: string): string => {
        const dir = join(t.lxc.confDir, `fetched-${side}`);
        mkdirSync(dir);
        return dir;
      };
      outcomes = { real: await playbook(t, 'local', name, fetched('real')), sim: await playbook(t, 'sim', name, fetched('sim')) };
    }, 300_000);

    afterAll(async () => {
      for (const remote of ['local', 'sim']) await t?.lxc.run(['delete', '--force', `${remote}:${name}`]);
      await t?.close();
    });

    it('runs every task of the playbook', () => {
      expect(outcomes.real.map((o) => o.task)).toEqual(['raw', 'script', 'command', 'copy', 'fetch', 'file', 'template', 'raw after the modules']);
      expect(outcomes.real[0]!.result).toMatchObject({ rc: 0, stdout: 'hi\nLinux\n0022\n' });
      // The script is pushed (the plugin's lxc file push) and run by the shell: no Python needed.
      expect(outcomes.real[1]!.result).toMatchObject({ rc: 0, stdout: expect.stringContaining('script ran as root') });
      expect(outcomes.real[2]!.result).toMatchObject({ failed: true, module_stderr: expect.stringContaining('/bin/sh: /usr/bin/python: not found') });
    });

    for (const [i, task] of ['raw', 'script', 'command', 'copy', 'fetch', 'file', 'template', 'raw after the modules'].entries()) {
      it(`${task}: the same result`, () => {
        expect(outcomes.sim[i]).toEqual(outcomes.real[i]);
      });
    }
  });
}
