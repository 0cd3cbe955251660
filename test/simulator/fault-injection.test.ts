import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { drained, startTestSim, type TestSim } from './sim-client.js';
import { sleep, until } from '../support/wait.js';

let t: TestSim;
beforeEach(async () => {
  // A stop hook long enough to observe the busy window even on a loaded machine.
  t = await startTestSim({ timings: { stopHookMs: 1_500 } });
  t.sim.controls.addInstance({ name: 'c1' });
});
afterEach(async () => t.close());

const state = async (name = 'c1') => (await t.api('GET', `/1.0/instances/${name}/state`)).body.metadata;
const act = async (action: string, extra: Record<string, unknown> = {}) =>
  t.waitOp(await t.api('PUT', '/1.0/instances/c1/state', { action, ...extra }));

/** Runs each scenario once through the typed controls and once through the HTTP control API. */
const paths = [
  [
    'in-process',
    (name: string, fault: string, body?: Record<string, unknown>) => {
      const c = t.sim.controls;
      if (fault === 'crash') c.crash(name);
      else if (fault === 'error') c.setError(name);
      else if (fault === 'fail-next') c.failNext(name, body?.count as number, body?.err as string);
      else if (fault === 'hang-next') c.hangNext(name, body?.count as number);
      else if (fault === 'crash-loop') c.crashLoop(name, body?.uptime_ms as number);
      else if (fault === 'fail-next-start') c.failNextStart(name);
      return Promise.resolve();
    },
  ],
  [
    'control API',
    async (name: string, fault: string, body?: Record<string, unknown>) => {
      const res = await t.api('POST', `/sim/instances/${name}/${fault}`, body ?? {});
      expect(res.status).toBe(200);
    },
  ],
] as const;

describe.each(paths)('fault injection (%s)', (_label, inject) => {
  it('crash: Stopped at once, then instance-shutdown without requestor after the stop hook; start is busy, stop already stopped meanwhile', async () => {
    const tap = await t.events('?type=lifecycle');
    await inject('c1', 'crash');
    expect(await state()).toMatchObject({ status_code: 102, pid: 0 });
    const busy = await act('start');
    expect(busy.err).toBe('Failed to create instance start operation: Instance is busy running a "stop" operation');
    // Both real daemons take the stop (202) and fail its operation so, before the shutdown is announced.
    const stop = await act('stop');
    expect({ status: stop.status, err: stop.err }).toEqual({ status: 'Failure', err: 'The instance is already stopped' });
    expect(
      tap.frames.some((f) => f.metadata.action === 'instance-shutdown'),
      'refused before the announcement',
    ).toBe(false);
    const ev = await tap.until((f) => f.metadata.action === 'instance-shutdown');
    expect(ev.metadata.requestor).toBeUndefined();
    expect((await act('start')).status_code).toBe(200);
  });

  it('error: status 112 with no event', async () => {
    const tap = await t.events();
    await inject('c1', 'error');
    expect((await t.api('GET', '/1.0/instances/c1')).body.metadata).toMatchObject({ status: 'Error', status_code: 112 });
    await drained(t.sim, tap, 'c1');
    expect(tap.frames.filter((f) => f.type !== 'logging')).toEqual([]);
    expect((await act('stop', { force: true })).status_code).toBe(200);
    expect((await state()).status_code).toBe(102);
  });

  it('fail-next: the next N operations fail with the given err, then things work again', async () => {
    await inject('c1', 'fail-next', { count: 2, err: 'disk on fire' });
    expect(await act('freeze')).toMatchObject({ status_code: 400, err: 'disk on fire' });
    expect((await act('freeze')).err).toBe('disk on fire');
    expect((await act('freeze')).status_code).toBe(200);
  });

  it('hang-next: the operation stays Running and can be cancelled', async () => {
    await inject('c1', 'hang-next', { count: 1 });
    const res = await t.api('PUT', '/1.0/instances/c1/state', { action: 'freeze' });
    const waited = await t.api('GET', `${res.body.operation}/wait?timeout=0.1`);
    expect(waited.body.metadata).toMatchObject({ status_code: 103, may_cancel: true });
    expect((await t.api('DELETE', res.body.operation)).status).toBe(200);
    expect((await t.api('GET', res.body.operation)).body.metadata.status_code).toBe(401);
    expect((await act('freeze')).status_code).toBe(200);
  });

  it('crash-loop: each start succeeds, then the instance exits again without requestor', async () => {
    await act('stop', { force: true });
    const tap = await t.events('?type=lifecycle');
    await inject('c1', 'crash-loop', { uptime_ms: 30 });
    for (let i = 0; i < 2; i++) {
      expect((await act('start')).status_code).toBe(200);
      await tap.until(() => tap.lifecycle().filter((x) => x.metadata.action === 'instance-shutdown').length > i);
      await until('c1 stopped by its crash', async () => (await state()).status_code === 102);
    }
    expect(tap.lifecycle().map((f) => [f.metadata.action, f.metadata.requestor === undefined])).toEqual([
      ['instance-started', false],
      ['instance-shutdown', true],
      ['instance-started', false],
      ['instance-shutdown', true],
    ]);
  });

  it('fail-next-start: op Failure, a busy "stop" window, then a spurious instance-shutdown', async () => {
    await act('stop', { force: true });
    const tap = await t.events();
    await inject('c1', 'fail-next-start');
    const failed = await act('start');
    expect(failed.status_code).toBe(400);
    expect(failed.err).toMatch(/^Failed to run: .*forkstart c1/);
    const busy = await t.waitOp(await t.api('PUT', '/1.0/instances/c1', { restore: undefined, config: {} }));
    expect(busy.err).toBe('Failed to create instance update operation: Instance is busy running a "stop" operation');
    const ev = await tap.until((f) => f.metadata.action === 'instance-shutdown');
    expect(ev.metadata.requestor).toBeUndefined();
    expect((await state()).status_code).toBe(102);
    expect((await act('start')).status_code).toBe(200);
  });
});

describe('server-wide faults', () => {
  it('drops all event sockets', async () => {
    const tap = await t.events();
    const closed = new Promise<number>((r) => tap.ws.on('close', (c) => r(c)));
    expect((await t.api('POST', '/sim/events/drop')).status).toBe(200);
    expect(await closed).toBe(1006);
  });

  it('pauses and resumes event delivery without losing events', async () => {
    const tap = await t.events('?type=lifecycle');
    await t.api('POST', '/sim/events/pause');
    await act('freeze');
    // A quiet period is the point here: delivery is paused, so no marker event could get through either.
    await sleep(20);
    expect(tap.frames).toEqual([]);
    t.sim.controls.resumeEvents();
    expect((await tap.until((f) => f.metadata.action === 'instance-paused')).metadata.source).toBe('/1.0/instances/c1');
  });

  it('emits an event storm through the control API', async () => {
    const tap = await t.events('?type=lifecycle');
    await t.api('POST', '/sim/events/storm', { count: 500, action: 'instance-updated' });
    await tap.until(() => tap.frames.length >= 500);
    expect(tap.frames.length).toBe(500);
  });

  it('restarts the server: event sockets close, operations are forgotten, state survives', async () => {
    await act('freeze');
    const res = await t.api('PUT', '/1.0/instances/c1/state', { action: 'unfreeze' });
    await t.waitOp(res);
    const tap = await t.events();
    const closed = new Promise<void>((r) => tap.ws.on('close', () => r()));
    await t.sim.controls.restart(20);
    await closed;
    expect((await t.api('GET', '/1.0/instances/c1')).body.metadata.status_code).toBe(103);
    expect((await t.api('GET', res.body.operation)).status).toBe(404);
  });

  it('restarts through the control API', async () => {
    const tap = await t.events();
    const closed = new Promise<void>((r) => tap.ws.on('close', () => r()));
    expect((await t.api('POST', '/sim/restart', { downtime_ms: 20 })).status).toBe(200);
    await closed;
    const listing = await until(
      'the server answering again',
      async () => (await t.api('GET', '/1.0/instances')).status === 200 && (await t.api('GET', '/1.0/instances')),
    );
    expect(listing.body.metadata).toEqual(['/1.0/instances/c1']);
  });

  it('counts mutating calls per instance and action', async () => {
    await act('freeze');
    await act('unfreeze');
    await act('unfreeze');
    await t.api('GET', '/1.0/instances/c1');
    expect(t.sim.controls.calls('c1', 'unfreeze')).toBe(2);
    expect(t.sim.controls.calls('c1')).toBe(3);
    expect((await t.api('GET', '/sim/calls')).body.metadata).toEqual({ 'default/c1': { freeze: 1, unfreeze: 2 } });
  });
});
