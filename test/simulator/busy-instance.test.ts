import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestSim, type TestSim } from './sim-client.js';

/**
 * A state change arriving while another holds the instance's lock joins it, waits for it or is
 * refused, as measured on LXD 5.0.2 (src/simulator/busy-policy.ts has the table). The first change
 * takes a second here so the second request surely finds it running.
 */
let t: TestSim;
let n = 0;
let name: string;

beforeAll(async () => {
  t = await startTestSim({ timings: { stopMs: 1000, restartMs: 1000, startMs: 1000 } });
});
afterAll(async () => t.close());
beforeEach(() => {
  name = `b${++n}`;
  t.sim.controls.addInstance({ name, status: 'Running' });
});

/** Sends `first`, then `second` as soon as the first's 202 is in; returns both final operations and the lifecycle actions. */
async function pair(first: Record<string, unknown>, second: Record<string, unknown>) {
  const tap = await t.events('?type=lifecycle');
  const a = await t.api('PUT', `/1.0/instances/${name}/state`, first);
  const b = await t.api('PUT', `/1.0/instances/${name}/state`, second);
  expect([a.status, b.status]).toEqual([202, 202]);
  const [opA, opB] = await Promise.all([t.waitOp(a), t.waitOp(b)]);
  const status = (await t.api('GET', `/1.0/instances/${name}/state`)).body.metadata.status;
  const actions = tap.lifecycle().map((f) => `${f.metadata.action}${f.metadata.requestor ? '+r' : ''}`);
  tap.close();
  return { first: [opA.status, opA.err], second: [opB.status, opB.err], status, actions };
}

describe('state changes on a busy instance', () => {
  it('a graceful stop during a restart joins it: both succeed, the instance is Running, only instance-restarted', async () => {
    expect(await pair({ action: 'restart' }, { action: 'stop' })).toEqual({
      first: ['Success', ''],
      second: ['Success', ''],
      status: 'Running',
      actions: ['instance-restarted+r'],
    });
  });

  it('a start during a restart waits for it, then fails "already running"', async () => {
    expect(await pair({ action: 'restart' }, { action: 'start' })).toEqual({
      first: ['Success', ''],
      second: ['Failure', 'The instance is already running'],
      status: 'Running',
      actions: ['instance-restarted+r'],
    });
  });

  it('a second graceful stop during a graceful stop joins it, with an instance-shutdown of its own', async () => {
    expect(await pair({ action: 'stop' }, { action: 'stop' })).toEqual({
      first: ['Success', ''],
      second: ['Success', ''],
      status: 'Stopped',
      actions: ['instance-shutdown+r', 'instance-shutdown+r'],
    });
  });

  it('a forced stop during a graceful stop succeeds after it, with instance-stopped', async () => {
    expect(await pair({ action: 'stop' }, { action: 'stop', force: true })).toEqual({
      first: ['Success', ''],
      second: ['Success', ''],
      status: 'Stopped',
      actions: ['instance-shutdown+r', 'instance-stopped+r'],
    });
  });

  it('a start during a graceful stop waits, then fails "already running" (it read Running), leaving it Stopped', async () => {
    expect(await pair({ action: 'stop' }, { action: 'start' })).toEqual({
      first: ['Success', ''],
      second: ['Failure', 'The instance is already running'],
      status: 'Stopped',
      actions: ['instance-shutdown+r'],
    });
  });

  it('a restart during a graceful stop waits, then shuts down again and restarts: Running', async () => {
    expect(await pair({ action: 'stop' }, { action: 'restart' })).toEqual({
      first: ['Success', ''],
      second: ['Success', ''],
      status: 'Running',
      actions: ['instance-shutdown+r', 'instance-shutdown+r', 'instance-restarted+r'],
    });
  });

  it('a graceful stop during a start is refused, busy, and the start ends Running', async () => {
    await t.waitOp(await t.api('PUT', `/1.0/instances/${name}/state`, { action: 'stop', force: true }));
    expect(await pair({ action: 'start' }, { action: 'stop' })).toEqual({
      first: ['Success', ''],
      second: ['Failure', 'Instance is busy running a "start" operation'],
      status: 'Running',
      actions: ['instance-started+r'],
    });
  });
});
