import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { drained, startTestSim, type TestSim } from './sim-client.js';
import { until } from '../support/wait.js';

let t: TestSim | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe('operations', () => {
  it('waits with a timeout and answers 200 with the still-running operation', async () => {
    t = await startTestSim();
    t.sim.controls.addInstance({ name: 'c1' });
    t.sim.controls.hangNext('c1');
    const res = await t.api('PUT', '/1.0/instances/c1/state', { action: 'stop', force: true });
    const started = Date.now();
    const waited = await t.api('GET', `${res.body.operation}/wait?timeout=0.2`);
    expect(Date.now() - started).toBeGreaterThanOrEqual(180);
    expect(waited.status).toBe(200);
    expect(waited.body.metadata).toMatchObject({ status_code: 103, may_cancel: true });
  });

  it('cancels only cancellable operations: 104 then 401 (earlier spelling Cancelled)', async () => {
    t = await startTestSim();
    t.sim.controls.addInstance({ name: 'c1' });
    const tap = await t.events('?type=operation');
    const plain = await t.api('PUT', '/1.0/instances/c1/state', { action: 'freeze' });
    const refused = await t.api('DELETE', plain.body.operation);
    expect(refused).toMatchObject({ status: 400, body: { error: "This operation can't be cancelled" } });
    await t.waitOp(plain);
    t.sim.controls.hangNext('c1');
    const hung = await t.api('PUT', '/1.0/instances/c1/state', { action: 'unfreeze' });
    expect((await t.api('DELETE', hung.body.operation)).status).toBe(200);
    const after = (await t.api('GET', hung.body.operation)).body.metadata;
    expect(after).toMatchObject({ status: 'Cancelled', status_code: 401 });
    const codes = tap.frames.filter((f) => f.metadata.id === after.id).map((f) => f.metadata.status_code);
    expect(codes).toEqual([105, 103, 104, 401]);
    expect((await t.api('DELETE', '/1.0/operations/00000000-0000-4000-8000-000000000000')).body).toMatchObject({
      error_code: 404,
      error: 'Operation not found',
    });
  });

  it('lists operations grouped by lowercase status and removes them after retention', async () => {
    // Kept long enough to be listed right after it ended even on a loaded machine (at 100 ms, a CI
    // run's GET of the list came after it was gone), short enough to wait for its removal.
    t = await startTestSim({ timings: { operationRetentionMs: 2_000 } });
    t.sim.controls.addInstance({ name: 'c1' });
    const res = await t.api('PUT', '/1.0/instances/c1/state', { action: 'start' });
    await t.waitOp(res);
    expect((await t.api('GET', '/1.0/operations')).body.metadata).toEqual({ failure: [res.body.operation] });
    await until('the operation forgotten after its retention', async () => (await t!.api('GET', res.body.operation)).status === 404);
  });

  it('spells Canceled and lists only the instances resource key on the later revision', async () => {
    t = await startTestSim({ revision: 'later' });
    t.sim.controls.addInstance({ name: 'c1', status: 'Stopped' });
    const created = await t.api('POST', '/1.0/instances', { name: 'n1' });
    expect(created.body.metadata.resources).toEqual({ instances: ['/1.0/instances/n1'] });
    t.sim.controls.hangNext('c1');
    const hung = await t.api('PUT', '/1.0/instances/c1/state', { action: 'start' });
    await t.api('DELETE', hung.body.operation);
    expect((await t.api('GET', hung.body.operation)).body.metadata.status).toBe('Canceled');
    expect((await t.api('GET', '/1.0/containers')).status).toBe(404);
  });
});

describe('events socket', () => {
  it('frames one JSON object plus newline with LXD field order', async () => {
    t = await startTestSim();
    t.sim.controls.addInstance({ name: 'c1' });
    const tap = await t.events('?type=lifecycle');
    await t.api('PUT', '/1.0/instances/c1/state', { action: 'freeze' });
    await tap.until((f) => f.metadata.action === 'instance-paused');
    const raw = tap.raw[0]!;
    expect(raw.endsWith('}\n')).toBe(true);
    expect(Object.keys(JSON.parse(raw))).toEqual(['type', 'timestamp', 'metadata', 'location', 'project']);
    expect(Object.keys(JSON.parse(raw).metadata)).toEqual(['action', 'source', 'requestor']);
    expect(JSON.parse(raw).timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{1,9}\+00:00$/);
  });

  it('accepts both "operation" and "operations" and filters by type', async () => {
    t = await startTestSim();
    t.sim.controls.addInstance({ name: 'c1' });
    const a = await t.events('?type=operation');
    const b = await t.events('?type=operations');
    const res = await t.api('PUT', '/1.0/instances/c1/state', { action: 'freeze' });
    await t.waitOp(res);
    await a.until((f) => f.metadata.status_code === 200);
    await b.until((f) => f.metadata.status_code === 200);
    expect(a.frames.every((f) => f.type === 'operation')).toBe(true);
  });

  it('rejects an unknown type with HTTP 500 and a plain GET with text 400', async () => {
    t = await startTestSim();
    const plain = await t.api('GET', '/1.0/events');
    expect(plain.status).toBe(400);
    const status = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`ws+unix://${t!.sim.socketPath}:/1.0/events?type=bogus`);
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('error', () => undefined);
    });
    expect(status).toBe(500);
  });

  it('scopes events to the project unless all-projects is asked for', async () => {
    t = await startTestSim({ projects: ['web'] });
    t.sim.controls.addInstance({ name: 'w1', project: 'web' });
    t.sim.controls.addInstance({ name: 'd1' });
    const def = await t.events('?type=lifecycle');
    const all = await t.events('?type=lifecycle&all-projects=true');
    await t.api('PUT', '/1.0/instances/w1/state?project=web', { action: 'freeze' });
    const f = await all.until((x) => x.metadata.action === 'instance-paused');
    expect(f.project).toBe('web');
    expect(f.metadata.source).toBe('/1.0/instances/w1?project=web');
    await drained(t.sim, def, 'd1');
    expect(def.frames).toEqual([]);
  });

  it('pings with payload "keepalive" and cuts a client that never answers', async () => {
    t = await startTestSim({ events: { pingIntervalMs: 30 } });
    // Listened to from before the upgrade: on a loaded machine the pings can arrive with the upgrade's answer.
    const silent = new WebSocket(`ws+unix://${t.sim.socketPath}:/1.0/events`, { autoPong: false });
    const payloads: string[] = [];
    silent.on('ping', (d) => payloads.push(d.toString()));
    const closed = new Promise<number>((r) => silent.on('close', (code) => r(code)));
    expect(await closed).toBe(1006);
    // One right after the upgrade, then one per interval until more than maxMissedPings (2) went unanswered.
    expect(payloads).toEqual(['keepalive', 'keepalive', 'keepalive']);
    const polite = await t.events();
    let answered = 0;
    polite.ws.on('ping', () => void answered++);
    await until('three pings answered', () => answered >= 3);
    expect(polite.ws.readyState).toBe(WebSocket.OPEN);
  });

  it('drops a slow consumer whose writes miss the deadline', async () => {
    t = await startTestSim({ events: { writeDeadlineMs: 100 } });
    t.sim.controls.addInstance({ name: 'c1' });
    const tap = await t.events();
    const socket = (tap.ws as any)._socket;
    socket.pause();
    t.sim.controls.storm(20_000, { name: 'c1' });
    const started = Date.now();
    // The paused client cannot see the EOF, so watch the server side.
    await until('the server dropped the listener', () => t!.sim.controls.eventListeners === 0, 3000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
  });

  it('delivers a 10k-event storm to a reading client', async () => {
    t = await startTestSim();
    t.sim.controls.addInstance({ name: 'c1' });
    const tap = await t.events('?type=lifecycle');
    const started = Date.now();
    t.sim.controls.storm(10_000, { name: 'c1' });
    await tap.until(() => tap.frames.length >= 10_000, 10_000);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
