import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isApiStatus } from '../../src/client/api-error.js';
import { InstanceClient } from '../../src/client/client.js';
import { StatusCode } from '../../src/client/status-code.js';
import { parseTarget } from '../../src/client/target.js';
import { StopConfirmation } from '../../src/remediation/stop-confirmation.js';
import type { InstanceRef } from '../../src/redis/key-space.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { crashEvent } from '../support/crash-event.js';
import { quickSimTimings } from '../support/stack.js';
import { clockPast, sleep } from '../support/wait.js';

/**
 * The confirmation of a stop against the daemon, on the simulator's API: one read for a stop that
 * would count as a crash, none for anything else; an instance that still reads as up is read again
 * until the settle deadline (a real daemon may announce a stop before its status says so), and
 * the verdict says why a stop does not count.
 */
describe('confirming a stop against the daemon', () => {
  let sim: RunningSimulator;
  let client: InstanceClient;
  let reads = 0;
  /** What the tracker held before the event (the confirmation's `knownBefore`). */
  let before: { status: number; at: number } | undefined;
  const target = 'unix:///sim';

  beforeAll(async () => {
    sim = await startSimulator({ instances: 0, timings: quickSimTimings });
    client = new InstanceClient(parseTarget(`unix://${sim.socketPath}`));
  });
  afterAll(async () => {
    await client.close();
    await sim.stop();
  });

  const confirmation = (settleMs: number) =>
    new StopConfirmation({
      settleMs,
      knownBefore: async () => before,
      readInstance: async (ref: InstanceRef) => {
        reads++;
        try {
          return (await client.withProject(ref.project).getInstance(ref.instance)).value;
        } catch (err) {
          if (isApiStatus(err, 404)) return undefined;
          throw err;
        }
      },
    });

  beforeEach(() => {
    before = undefined;
  });

  it('reads nothing for an event that would not count as a crash (a requested stop, a resync’s read, a start)', async () => {
    sim.controls.addInstance({ name: 'quiet' });
    reads = 0;
    const c = confirmation(1_000);
    expect(await c.confirm(crashEvent(target, 'quiet', { intent: 'requested' }))).toEqual({ checked: false });
    expect(await c.confirm(crashEvent(target, 'quiet', { synthetic: true }))).toEqual({ checked: false });
    expect(await c.confirm(crashEvent(target, 'quiet', { to: StatusCode.Running, action: 'instance-started' }))).toEqual({ checked: false });
    expect(reads).toBe(0);
  });

  it('confirms a stop the daemon’s status catches up with within the settle time, reading again until it does', async () => {
    sim.controls.addInstance({ name: 'late' });
    reads = 0;
    const t0 = performance.now();
    // The event comes first and the status follows 300 ms later: what a daemon slow to settle shows.
    const verdict = confirmation(3_000).confirm(crashEvent(target, 'late'));
    await sleep(300); // the lag of the status behind the event, the point of the test
    sim.controls.crash('late');
    expect(await verdict).toMatchObject({ checked: true, confirmed: true, instance: { name: 'late', status_code: StatusCode.Stopped } });
    const took = performance.now() - t0;
    expect(took).toBeGreaterThanOrEqual(300);
    expect(took, 'confirmed as soon as a read shows the stop, not at the deadline').toBeLessThan(2_000);
    expect(reads).toBeGreaterThan(1);
  });

  it('calls a stop of an instance that stays up contradicted, only once the settle time has passed', async () => {
    sim.controls.addInstance({ name: 'up' });
    const t0 = performance.now();
    const verdict = await confirmation(600).confirm(crashEvent(target, 'up'));
    expect(verdict).toMatchObject({
      checked: true,
      confirmed: false,
      contradiction: 'not-down',
      summary: expect.stringMatching(/but up is Running \(103\)/),
    });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(600);
  });

  it('answers at once for a name that exists nowhere, an instance created after the event, and one started again after it', async () => {
    reads = 0;
    const c = confirmation(5_000);
    const t0 = performance.now();
    expect(await c.confirm(crashEvent(target, 'nowhere'))).toMatchObject({ confirmed: false, contradiction: 'gone' });

    const before = new Date(Date.now() - 60_000).toISOString();
    sim.controls.addInstance({ name: 'newer', status: 'Stopped' });
    expect(await c.confirm(crashEvent(target, 'newer', { timestamp: before }))).toMatchObject({
      confirmed: false,
      contradiction: 'another-instance',
    });

    sim.controls.addInstance({ name: 'rebooted', status: 'Stopped' });
    // Stopped after it was created, then started again (a guest reboot on LXD 5.0 sends just that).
    const stopped = crashEvent(target, 'rebooted', { timestamp: new Date(await clockPast(Date.now())).toISOString() });
    await (await client.changeState('rebooted', { action: 'start' })).wait();
    expect(await c.confirm(stopped)).toMatchObject({
      confirmed: false,
      contradiction: 'started-since',
      summary: expect.stringMatching(/^overtaken: /),
    });
    expect(reads, 'one read each').toBe(3);
    expect(performance.now() - t0, 'none waited for the settle time').toBeLessThan(5_000);
  });

  it('calls a stop of an instance already down in that status, and not started since, contradicted: already-down', async () => {
    sim.controls.addInstance({ name: 'held' });
    await (await client.changeState('held', { action: 'stop', force: true })).wait();
    // The operator's stop, as the tracker knows it, then a shutdown without requestor repeating it.
    before = { status: StatusCode.Stopped, at: Date.now() };
    const repeat = crashEvent(target, 'held', { from: StatusCode.Stopped, timestamp: new Date(before.at + 300).toISOString() });
    expect(await confirmation(1_000).confirm(repeat)).toMatchObject({
      confirmed: false,
      contradiction: 'already-down',
      summary: expect.stringMatching(/was Stopped \(102\) already since .* and has not been started since/),
    });
    // Nothing known of before: the stream said it was down already, and nothing says it started since.
    before = undefined;
    expect(await confirmation(1_000).confirm(repeat)).toMatchObject({ confirmed: false, contradiction: 'already-down' });
  });

  it('confirms a repeated stop when the daemon shows a start since the known one (a start the stream did not tell)', async () => {
    sim.controls.addInstance({ name: 'missed-start', status: 'Stopped' });
    before = { status: StatusCode.Stopped, at: await clockPast(Date.now()) };
    await (await client.changeState('missed-start', { action: 'start' })).wait();
    sim.controls.crash('missed-start');
    const crash = crashEvent(target, 'missed-start', { from: StatusCode.Stopped });
    expect(await confirmation(1_000).confirm(crash)).toMatchObject({ checked: true, confirmed: true });
  });
});
