import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InstanceClient } from '../../src/client/client.js';
import { parseTarget } from '../../src/client/target.js';
import { defineProbe } from '../../src/probes/probe.js';
import { addressOf, runCheck } from '../../src/probes/probe-check.js';
import { startSimulator } from '../../src/simulator/simulator.js';
import { freePort } from '../support/free-port.js';
import { startReflexProcess } from '../support/reflex-process.js';
import { cleanupsAfterEach } from '../support/stopped-after-each.js';
import { until } from '../support/wait.js';

/** Issue #43 item 8: the simulator's guest, as probes and their tests use it. */
describe('probes on the simulator’s guest', () => {
  const cleanups = cleanupsAfterEach();

  it('reflex sim takes a guest port, says which it listens on, and a tcp and an http probe reach a live port there', async () => {
    const port = await freePort();
    const socket = join(mkdtempSync(join(tmpdir(), 'reflex-sim-guest-')), 'sim.sock');
    const sim = startReflexProcess(['sim', '--listen', `unix:${socket}`, '--instances', '1', '--guest-port', String(port)]);
    cleanups.push(() => sim.stop());
    await sim.waitForLog(`reflex sim guest port: ${port} `);
    const client = new InstanceClient(parseTarget(`unix://${socket}`));
    cleanups.push(() => client.close());
    const [instance] = await client.listInstances();
    const address = addressOf(await client.getInstanceState(instance!.name));
    expect(address).toBeDefined();
    // The instance listens from the moment its address is shown: its listener binds a moment after the answer.
    const tcp = await until(
      'the guest port answers',
      async () => {
        const r = await runCheck(defineProbe({ name: 't', kind: 'tcp', port, timeoutMs: 20_000 }), client, instance!.name, address);
        return r.outcome === 'success' ? r : undefined;
      },
      10_000,
    );
    expect(tcp).toMatchObject({ outcome: 'success', output: `connected to ${address}:${port}` });
    const http = await runCheck(defineProbe({ name: 'h', kind: 'http', port, timeoutMs: 20_000 }), client, instance!.name, address);
    expect(http.outcome, http.output).toBe('success');
    const closed = await freePort();
    const refused = await runCheck(defineProbe({ name: 't', kind: 'tcp', port: closed, timeoutMs: 20_000 }), client, instance!.name, address);
    expect(refused.outcome).toBe('failure');
  }, 60_000);

  it('a scripted shell builtin (test, [) answers as scripted, and its unscripted calls run the builtin', async () => {
    const sim = await startSimulator({ instances: 0 });
    cleanups.push(() => sim.stop());
    sim.controls.addInstance({ name: 'web1', status: 'Running' });
    const client = new InstanceClient(parseTarget(`unix://${sim.socketPath}`));
    cleanups.push(() => client.close());
    sim.controls.scriptCommand({ command: 'test -f /run/ok', outcomes: [{ exitCode: 0 }, { exitCode: 1, stderr: 'gone\n' }] });
    sim.controls.scriptCommand({ command: '[ -f /run/ready ]', outcomes: [{ exitCode: 0 }] });
    const run = async (command: string[]) => {
      const r = await (await client.exec('web1', { command }, { timeoutMs: 20_000 })).wait();
      return { exit: r.exitCode, stdout: r.stdout, stderr: r.stderr };
    };
    // The docs' per-instance probe, `sh -c "test -f /run/ok"`: scripted, though /run/ok does not exist.
    expect(await run(['sh', '-c', 'test -f /run/ok'])).toMatchObject({ exit: 0 });
    expect(await run(['sh', '-c', 'test -f /run/ok'])).toMatchObject({ exit: 1, stderr: 'gone\n' });
    expect(sim.controls.commandCalls('web1', 'test -f /run/ok')).toBe(2);
    expect(await run(['sh', '-c', '[ -f /run/ready ] && echo ready'])).toMatchObject({ exit: 0, stdout: 'ready\n' });
    // argv form, no shell.
    expect(await run(['test', '-f', '/run/ok'])).toMatchObject({ exit: 1 });
    // Calls no script answers are the builtin's own.
    expect(await run(['sh', '-c', 'test -d / && echo dir; test -f /nope; echo $?; [ -d /etc ]; echo $?'])).toMatchObject({
      exit: 0,
      stdout: 'dir\n1\n0\n',
    });
  }, 60_000);
});
