import { afterEach, describe, expect, it } from 'vitest';
import { InstanceClient } from '../../src/client/client.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { fastTimings, rawCall } from './sim-client.js';

let sim: RunningSimulator | undefined;
let client: InstanceClient | undefined;

async function simWith(...names: string[]): Promise<{ sim: RunningSimulator; client: InstanceClient }> {
  sim = await startSimulator({ timings: fastTimings });
  client = new InstanceClient({ kind: 'unix', socketPath: sim.socketPath!, url: `unix://${sim.socketPath}` });
  for (const name of names) sim.controls.addInstance({ name, status: 'Running' });
  return { sim, client };
}

afterEach(async () => {
  await client?.close();
  await sim?.stop();
  sim = undefined;
  client = undefined;
});

const run = async (c: InstanceClient, name: string, command: string[], opts: { timeoutMs?: number; stdin?: string } = {}) =>
  (await c.exec(name, { command }, opts)).wait({ timeoutMs: 20_000 });

describe('the guest shell of a simulated instance', () => {
  it('a scripted `systemctl restart nginx` fails on its first call and succeeds after, counted per instance', async () => {
    const { sim, client } = await simWith('web1', 'web2');
    sim.controls.scriptCommand({
      command: 'systemctl restart nginx',
      outcomes: [{ exitCode: 1, stderr: 'Job for nginx.service failed.\n' }, { stdout: 'restarted\n' }],
    });
    const first = await run(client, 'web1', ['systemctl', 'restart', 'nginx']);
    expect(first).toMatchObject({ exitCode: 1, stdout: '', stderr: 'Job for nginx.service failed.\n' });
    expect(await run(client, 'web1', ['sh', '-c', 'systemctl restart nginx && echo ok'])).toMatchObject({ exitCode: 0, stdout: 'restarted\nok\n' });
    // Another instance has its own nginx: its first restart fails too.
    expect((await run(client, 'web2', ['systemctl', 'restart', 'nginx'])).exitCode).toBe(1);
    expect(sim.controls.commandCalls('web1', 'systemctl restart nginx')).toBe(2);
    expect(sim.controls.commandCalls('web2', 'systemctl restart nginx')).toBe(1);
    // A line no script answers: the program is not in the image.
    expect(await run(client, 'web1', ['sh', '-c', 'systemctl status nginx'])).toMatchObject({ exitCode: 127, stderr: 'sh: systemctl: not found\n' });
  });

  it('a script for one instance, over the HTTP control API, leaves the others alone; a scripted built-in still runs for other arguments', async () => {
    const { sim, client } = await simWith('a', 'b');
    const post = await fetchControl(sim, 'POST', '/sim/commands', {
      command: 'cat /etc/shadow',
      instance: 'a',
      outcomes: [{ stdout: 'root:*:19000::::::\n' }],
    });
    expect(post.status).toBe(200);
    expect((await run(client, 'a', ['cat', '/etc/shadow'])).stdout).toBe('root:*:19000::::::\n');
    expect((await run(client, 'a', ['cat', '/etc/passwd'])).stdout).toBe('root:x:0:0:root:/root:/bin/sh\n');
    expect((await run(client, 'b', ['cat', '/etc/shadow'])).exitCode).toBe(1);
    const listed = await fetchControl(sim, 'GET', '/sim/commands');
    expect((listed.body as { metadata: unknown }).metadata).toEqual([
      { command: 'cat /etc/shadow', instance: 'a', project: 'default', outcomes: [{ stdout: 'root:*:19000::::::\n' }], calls: { 'default/a': 1 } },
    ]);
    expect((await fetchControl(sim, 'DELETE', '/sim/commands')).status).toBe(200);
    expect((await run(client, 'a', ['cat', '/etc/shadow'])).exitCode).toBe(1);
  });

  it('a scripted command that hangs is killed by the exec timeout (SIGKILL through the control socket): 137', async () => {
    const { sim, client } = await simWith('c1');
    sim.controls.scriptCommand({ command: 'apt-get update', outcomes: [{ hang: true }] });
    const res = await run(client, 'c1', ['apt-get', 'update'], { timeoutMs: 300 });
    expect(res).toMatchObject({ timedOut: true, exitCode: 137 });
  });

  it("the EXIT trap after exit sees the variables and the directory the script left, with exit's status, from a function too", async () => {
    const { client } = await simWith('t');
    expect(await run(client, 't', ['sh', '-c', 'trap "echo \\$X; pwd" EXIT; X=1; cd /tmp; exit 3'])).toMatchObject({
      stdout: '1\n/tmp\n',
      exitCode: 3,
    });
    expect(await run(client, 't', ['sh', '-c', 'f() { X=2; exit 4; }; trap "echo \\$X" EXIT; f'])).toMatchObject({ stdout: '2\n', exitCode: 4 });
  });

  it('files written by one command are there for the next, and stdin reaches the command', async () => {
    const { client } = await simWith('c1');
    expect((await run(client, 'c1', ['sh', '-c', 'mkdir -p /srv/app && printf "%s\\n" one two > /srv/app/list'])).exitCode).toBe(0);
    expect((await run(client, 'c1', ['sh', '-c', 'wc -l < /srv/app/list; sort -r /srv/app/list | head -n 1'])).stdout).toBe('2\ntwo\n');
    expect((await run(client, 'c1', ['sh', '-c', 'tr a-z A-Z'], { stdin: 'shout\n' })).stdout).toBe('SHOUT\n');
  });

  it('a file made by a command run as another user belongs to that user', async () => {
    const { sim, client } = await simWith('c1');
    await (await client.exec('c1', { command: ['sh', '-c', 'echo mine > /tmp/owned'], user: 1000, group: 1000 })).wait({ timeoutMs: 20_000 });
    const res = await fetchControl(sim, 'GET', `/1.0/instances/c1/files?path=${encodeURIComponent('/tmp/owned')}`);
    expect(res.headers['x-lxd-uid']).toBe('1000');
    expect(res.headers['x-lxd-gid']).toBe('1000');
  });
});

/** A raw call on the simulator's socket. */
async function fetchControl(s: RunningSimulator, method: string, path: string, body?: unknown) {
  const { Agent } = await import('undici');
  const agent = new Agent({ connect: { socketPath: s.socketPath! } });
  try {
    return await rawCall(agent, method, path, body);
  } finally {
    await agent.close();
  }
}
