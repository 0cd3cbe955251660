import { execFile, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { describeBed, lxdBed, TEST_IMAGE } from '../support/daemon-bed.js';

/**
 * A differential driven by a real client library, not our own client: pylxd (Debian's
 * python3-pylxd, 2.2.x) runs one script (pylxd-scenario.py) against the simulator and against LXD
 * 5.0.2, and each step must end the same way on both: the same exception class with the same
 * message (pylxd raises from the request or from the operation's wait, so the error channel shows),
 * or the same resulting state.
 */
const python = '/usr/bin/python3';
const script = join(import.meta.dirname, 'pylxd-scenario.py');
const run = promisify(execFile);
const hasPylxd = spawnSync(python, ['-c', 'import pylxd'], { stdio: 'ignore' }).status === 0;

async function scenario(socket: string, prefix: string): Promise<{ step: string; outcome: unknown }[]> {
  const { stdout } = await run(python, [script, socket, prefix, TEST_IMAGE], { timeout: 300_000, env: { ...process.env, PYTHONWARNINGS: 'ignore' } });
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { step: string; outcome: unknown });
}

if (!hasPylxd && process.env.REFLEX_REQUIRE_LXD !== '1') {
  describe.skip('pylxd differential', () => it('needs python3-pylxd (apt-get install python3-pylxd)', () => undefined));
} else {
  await describeBed(lxdBed, 'pylxd gets the same outcomes from the simulator as from LXD 5.0.2', () => {
    let sim: RunningSimulator;
    beforeAll(async () => {
      if (!hasPylxd) throw new Error('python3-pylxd is not installed (apt-get install python3-pylxd; .ci/run installs it)');
      sim = await startSimulator();
    });
    afterAll(async () => sim?.stop());

    it('runs every step of the scenario to the same end', async () => {
      const prefix = `rt-pylxd-${process.pid}-`;
      const [onSim, onDaemon] = [await scenario(sim.socketPath!, prefix), await scenario(lxdBed.socket, prefix)];
      expect(onDaemon.length).toBeGreaterThanOrEqual(22);
      expect(onSim).toEqual(onDaemon);
    }, 600_000);
  });
}
