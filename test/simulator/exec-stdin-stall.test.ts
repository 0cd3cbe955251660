import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startTestSim, type TestSim } from './sim-client.js';

/** Blocks this process (the simulator's too: it runs in it) for `ms`, as a starved CI machine does. */
function stall(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/**
 * A non-interactive exec's stdin, sent by a client after the simulator's process was stalled for
 * longer than the simulator waits for a first byte (1 s): the command still reads it. A plain timer
 * fired before the bytes that arrived during the stall were read, and the command ran with none (CI
 * saw `cat > f && python3 f` run an empty script).
 */
describe('an exec whose stdin comes after the simulator was stalled', () => {
  let t: TestSim | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  for (const [title, command] of [
    ['a command that takes its stdin whole', ['cat']],
    ['a shell that reads its script from stdin', ['sh']],
  ] as const)
    it(`reaches ${title}`, async () => {
      t = await startTestSim();
      t.sim.controls.addInstance({ name: 'c1', status: 'Running' });
      const answer = await t.api('POST', '/1.0/instances/c1/exec', { command, 'wait-for-websocket': true, interactive: false });
      expect(answer.status).toBe(202);
      const fds = answer.body.metadata.metadata.fds as Record<string, string>;
      const url = (secret: string) => `ws+unix://${t!.sim.socketPath}:${answer.body.operation}/websocket?secret=${secret}`;
      const sockets = Object.fromEntries(Object.entries(fds).map(([fd, secret]) => [fd, new WebSocket(url(secret))]));
      const stdout: Buffer[] = [];
      const ended = new Promise<void>((resolve) =>
        sockets['1']!.on('message', (data, binary) => (binary ? stdout.push(Buffer.from(data as Buffer)) : resolve())),
      );
      await Promise.all(Object.values(sockets).map((ws) => new Promise((resolve) => ws.once('open', resolve))));
      stall(1_500);
      sockets['0']!.send(Buffer.from(command[0] === 'sh' ? 'echo from the script\n' : 'late but sent\n'), { binary: true });
      sockets['0']!.send('', { binary: false });
      await ended;
      const op = await t.waitOp(answer);
      for (const ws of Object.values(sockets)) ws.close();
      expect({ stdout: Buffer.concat(stdout).toString(), code: op.metadata.return }).toEqual({
        stdout: command[0] === 'sh' ? 'from the script\n' : 'late but sent\n',
        code: 0,
      });
    });
});
