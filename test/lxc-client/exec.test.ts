import WebSocket from 'ws';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeLxcClient, startSimRemote, type SimRemote } from './sim-remote.js';

let t: SimRemote;

describeLxcClient('lxc exec against reflex sim', () => {
  beforeAll(async () => {
    t = await startSimRemote({ trustPassword: 's3cret' });
    await t.lxc.ok(['remote', 'add', 'sim', t.sim.httpsUrl!, '--password', 's3cret', '--accept-certificate']);
    t.sim.controls.addInstance({ name: 'c1' });
    t.sim.controls.addInstance({ name: 'off', status: 'Stopped' });
  });
  afterAll(async () => t?.close());

  it("prints the command's output and exits with its code: sh -c 'echo hi; exit 3'", async () => {
    const res = await t.lxc.run(['exec', 'sim:c1', '--', 'sh', '-c', 'echo hi; exit 3']);
    expect(res).toEqual({ stdout: 'hi\n', stderr: '', code: 3 });
  });

  it('runs echo with arguments and true/false with their exit codes', async () => {
    expect(await t.lxc.run(['exec', 'sim:c1', '--', 'echo', 'hello', 'world'])).toEqual({ stdout: 'hello world\n', stderr: '', code: 0 });
    expect((await t.lxc.run(['exec', 'sim:c1', '--', 'true'])).code).toBe(0);
    expect((await t.lxc.run(['exec', 'sim:c1', '--', 'false'])).code).toBe(1);
    expect(await t.lxc.run(['exec', 'sim:c1', '--', 'sh', '-c', 'false || echo fallback && exit 7'])).toEqual({
      stdout: 'fallback\n',
      stderr: '',
      code: 7,
    });
  });

  it('answers an unknown command with 127 like a shell, and the operation fails with "Command not found" as in LXD', async () => {
    expect(await t.lxc.run(['exec', 'sim:c1', '--', 'sh', '-c', 'nosuchcmd'])).toEqual({
      stdout: '',
      stderr: 'sh: nosuchcmd: not found\nError: Command not found\n',
      code: 127,
    });
    expect((await t.lxc.run(['exec', 'sim:c1', '--', 'nosuchcmd'])).code).toBe(127);
  });

  it('serves the exec over four operation websockets and records the exit code in the operation', async () => {
    const frames: any[] = [];
    const ws = new WebSocket(`ws+unix://${t.sim.socketPath}:/1.0/events?type=operation,lifecycle`);
    ws.on('message', (d) => frames.push(JSON.parse(String(d))));
    await new Promise((resolve) => ws.once('open', resolve));
    t.clearRequests();
    expect((await t.lxc.run(['exec', 'sim:c1', '--', 'sh', '-c', 'exit 5'])).code).toBe(5);
    ws.close();
    const sockets = t.requests().filter((r) => /^GET \/1\.0\/operations\/[^/]+\/websocket\?secret=/.test(r));
    // stdin, stdout, stderr and control, as the daemon offers them to a non-interactive client.
    expect(sockets).toHaveLength(4);
    const done = frames.find((f) => f.type === 'operation' && f.metadata.class === 'websocket' && f.metadata.status_code === 200);
    expect(done.metadata.metadata).toMatchObject({ command: ['sh', '-c', 'exit 5'], interactive: false, return: 5 });
    expect(frames.find((f) => f.type === 'lifecycle').metadata).toMatchObject({
      action: 'instance-exec',
      context: { command: ['sh', '-c', 'exit 5'] },
    });
  });

  it("refuses exec on a stopped instance with the daemon's error", async () => {
    const res = await t.lxc.run(['exec', 'sim:off', '--', 'true']);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe('Error: Instance is not running\n');
  });
});
