import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredAuditRecord } from '../../src/audit/audit-log.js';
import { InstanceClient } from '../../src/client/client.js';
import { parseTarget } from '../../src/client/target.js';
import { redisFromUrl, type RedisConnection } from '../../src/redis/connect.js';
import { callAction } from '../../src/remediation/act/acting-client.js';
import { waitForAudit, trailLines } from '../support/audit-trail.js';
import { describeEachBed, startReflexOn, type DaemonBed } from '../support/daemon-bed.js';
import { redisUrl, uniquePrefix } from '../support/redis.js';
import type { ReflexProcess } from '../support/reflex-process.js';
import { startStack, type Stack } from '../support/stack.js';

/**
 * A user-defined action gets only the acting client: the three different calls it makes (a PATCH
 * of its config, a snapshot, a forced stop) are each audited with the path sent, marked as
 * Reflex's own (the stop triggers no rule that answers a stop), and refused once the instance's
 * lock is another holder's. The action waits between its first and second call while its instance
 * says `user.reflex.go=wait`, so that the test can take the lock away at that moment.
 */
const rules = {
  'acting.ts': `import { StatusCode, defineAction, defineRule, z } from 'reflex-lxd';
export const threeCalls = defineAction({
  name: 'three-calls',
  params: z.strictObject({}),
  async run(ctx) {
    const { client, instance } = ctx;
    const { etag } = await client.getInstance(instance);
    await client.patchInstance(instance, { config: { 'user.reflex.stamp': 'one' } }, etag);
    for (let i = 0; i < 300 && (await client.getInstance(instance)).value.config['user.reflex.go'] === 'wait'; i++)
      await new Promise((r) => setTimeout(r, 100));
    await (await client.createSnapshot(instance, { name: 'acting' })).wait();
    await (await client.changeState(instance, { action: 'stop', force: true })).wait();
    return { result: 'done', summary: 'three calls made' };
  },
});
export const noop = defineAction({ name: 'noop', touchesInstance: false, params: z.strictObject({}), run: () => ({ result: 'done', summary: 'nothing' }) });
export default [
  threeCalls,
  noop,
  defineRule({
    name: 'act-on-start',
    on: { kind: 'instance.status', to: [StatusCode.Running], intent: ['requested'] },
    scope: { filter: 'config.user.reflex.acting eq yes' },
    actions: [{ action: 'three-calls' }],
  }),
  defineRule({
    name: 'answer-a-stop',
    on: { kind: 'instance.status', to: [StatusCode.Stopped], intent: ['requested', 'unrequested'] },
    scope: { filter: 'config.user.reflex.acting eq yes' },
    actions: [{ action: 'noop' }],
  }),
];
`,
};

/** What the scenario needs of where it runs: the simulator or a real daemon. */
interface World {
  prefix: string;
  /** An operator's client on the daemon. */
  operator: InstanceClient;
  /** A stopped instance with `config`. */
  create(config: Record<string, string>): Promise<string>;
}

function actingClientScenario(world: () => World): void {
  const calls = (trail: StoredAuditRecord[]) => trail.filter((r) => r.type === 'call').map((r) => `${r.method} ${String(r.path).split('?')[0]}`);

  it('audits each of the three calls a user-defined action makes with the path sent, and marks them its own: its stop triggers no rule', async () => {
    const { prefix, operator, create } = world();
    const name = await create({ 'user.reflex.acting': 'yes' });
    await (await operator.changeState(name, { action: 'start' })).wait();
    const trail = await waitForAudit(
      redisUrl(),
      prefix,
      name,
      (rs) =>
        rs.some((r) => r.type === 'outcome' && String(r.summary).startsWith('three-calls')) &&
        rs.some((r) => r.type === 'event' && / → 102 /.test(r.summary)),
      60_000,
    );
    const lines = trailLines(trail);
    expect(
      trail.find((r) => r.type === 'outcome' && String(r.summary).startsWith('three-calls')),
      lines,
    ).toMatchObject({ result: 'done' });
    expect(calls(trail), lines).toEqual([
      `PATCH /1.0/instances/${name}`,
      `POST /1.0/instances/${name}/snapshots`,
      `PUT /1.0/instances/${name}/state`,
    ]);
    expect(
      trail.filter((r) => r.type === 'call').every((r) => String(r.path).endsWith('?project=default')),
      lines,
    ).toBe(true);
    expect(trail.find((r) => r.type === 'event' && / → 102 /.test(r.summary))!.summary, lines).toContain('(self');
    expect(
      trail.filter((r) => r.type === 'decision' && r.rule === 'answer-a-stop' && r.matched === true),
      lines,
    ).toEqual([]);
    expect((await operator.listSnapshots(name)).map((s) => s.name)).toEqual(['acting']);
  }, 90_000);

  it('refuses the next call, sending nothing, once the instance lock is another holder’s', async () => {
    const { prefix, operator, create } = world();
    const name = await create({ 'user.reflex.acting': 'yes', 'user.reflex.go': 'wait' });
    await (await operator.changeState(name, { action: 'start' })).wait();
    await waitForAudit(redisUrl(), prefix, name, (rs) => calls(rs).length === 1, 60_000);
    const redis: RedisConnection = redisFromUrl(redisUrl());
    try {
      const [lock] = (await redis.keys(`{${prefix}:*/${name}}:lock`)).filter((k) => k.endsWith(`/${name}}:lock`));
      expect(lock).toBeDefined();
      await redis.set(lock!, 'another-holder', 'PX', 120_000);
      await operator.patchInstance(name, { config: { 'user.reflex.go': 'go' } });
      const trail = await waitForAudit(redisUrl(), prefix, name, (rs) => rs.some((r) => r.type === 'outcome' && r.code === 'LOCK_LOST'), 30_000);
      expect(calls(trail), trailLines(trail)).toEqual([`PATCH /1.0/instances/${name}`]);
      expect(await operator.listSnapshots(name)).toEqual([]);
      // The refused call's mark as Reflex's own (written beside the token's check) is taken back:
      // nothing was sent, so nothing of the operator's in its window may pass for Reflex's.
      const [own] = (await redis.keys(`{${prefix}:*/${name}}:own-ops`)).filter((k) => k.endsWith(`/${name}}:own-ops`));
      const marked = Object.values(await redis.hgetall(own!)).map((v) => (JSON.parse(v) as { action: string }).action);
      expect(marked).toContain('three-calls');
      expect(marked).not.toContain('snapshot');
    } finally {
      redis.disconnect();
    }
  }, 90_000);
}

describe('the name an own operation is recorded under (its echoes are chosen by it)', () => {
  const job = { action: 'my-action' };
  const path = (p: string) => `${p}?project=default`;
  it('is the verb of a state change, a snapshot, its deletion, a restore, an exec or a delete; else the action sending it', () => {
    expect(callAction({ method: 'PUT', path: path('/1.0/instances/c1/state'), body: { action: 'start' } }, job)).toBe('start');
    expect(callAction({ method: 'POST', path: path('/1.0/instances/c1/snapshots'), body: { name: 's' } }, job)).toBe('snapshot');
    expect(callAction({ method: 'DELETE', path: path('/1.0/instances/c1/snapshots/s') }, job)).toBe('delete-snapshot');
    expect(callAction({ method: 'PUT', path: path('/1.0/instances/c1'), body: { restore: 's' } }, job)).toBe('restore');
    expect(callAction({ method: 'POST', path: path('/1.0/instances/c1/exec'), body: { command: ['true'] } }, job)).toBe('exec');
    expect(callAction({ method: 'DELETE', path: path('/1.0/instances/c1') }, job)).toBe('delete');
    expect(callAction({ method: 'PATCH', path: path('/1.0/instances/c1'), body: { config: {} } }, job)).toBe('my-action');
    expect(callAction({ method: 'POST', path: '/1.0/networks' }, job)).toBe('my-action');
  });
});

describe('the acting client, on the simulator', () => {
  let stack: Stack;
  let n = 0;
  beforeAll(async () => {
    stack = await startStack({ redisUrl: redisUrl(), label: 'acting', rules });
  });
  afterAll(async () => {
    await stack?.stop();
  });
  actingClientScenario(() => ({
    prefix: stack.prefix,
    operator: stack.client,
    create: async (config) => {
      const name = `acting-${++n}`;
      stack.sim.controls.addInstance({ name, status: 'Stopped', config });
      return name;
    },
  }));
});

await describeEachBed('the acting client', (bed: DaemonBed) => {
  const prefix = uniquePrefix('acting');
  const made: string[] = [];
  let reflex: ReflexProcess;
  let operator: InstanceClient;
  beforeAll(async () => {
    mkdirSync(resolve('.tmp'), { recursive: true });
    const dir = mkdtempSync(join(resolve('.tmp'), 'rules-'));
    for (const [file, source] of Object.entries(rules)) writeFileSync(join(dir, file), source);
    reflex = startReflexOn(bed, redisUrl(), prefix, { args: ['--rules', dir] });
    await reflex.waitUntilWatching();
    operator = new InstanceClient(parseTarget(bed.target));
  }, 60_000);
  afterAll(async () => {
    await reflex?.stop();
    await operator?.close();
    for (const name of made) await bed.remove(name);
  });
  actingClientScenario(() => ({
    prefix,
    operator,
    create: async (config) => {
      const name = await bed.launch({ config, start: false });
      made.push(name);
      return name;
    },
  }));
});
