import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import type { ActionContext } from '../../src/actions/action.js';
import { emittedEventId } from '../../src/actions/emit-action.js';
import { runAction } from '../../src/actions/define-action.js';
import { builtinActions } from '../../src/actions/registry.js';
import type { StoredAuditRecord } from '../../src/audit/audit-log.js';
import { InstanceClient } from '../../src/client/client.js';
import type { CanonicalEvent } from '../../src/events/canonical-event.js';
import { keySpace } from '../../src/redis/key-space.js';
import { RuleEngine } from '../../src/rules/engine.js';
import { defineRule } from '../../src/rules/rule.js';
import { waitForAudit } from '../support/audit-trail.js';
import { redisClient, redisUrl, uniquePrefix } from '../support/redis.js';
import { startReflexBed } from './reflex-bed.js';
import { settled } from '../support/settled.js';
import { stoppedAfterEach } from '../support/stopped-after-each.js';

const onCrash = `{ kind: 'instance.status', to: [StatusCode.Stopped], intent: ['unrequested'] }`;
const rules = {
  'announce.ts': `import { StatusCode, defineRule } from 'reflex-lxd';
export default [
  defineRule({ name: 'announce-crash', on: ${onCrash}, scope: { filter: 'name eq web1' }, actions: [{ action: 'emit', params: { name: 'instance.crashed', payload: { why: 'crash' } } }] }),
  defineRule({ name: 'snapshot-after-crash', on: { kind: 'rule.event', name: ['instance.crashed'] }, when: ({ event }) => event.kind === 'rule.event' && event.payload.why === 'crash', actions: [{ action: 'snapshot', params: { name: 'after-crash' } }] }),
];
`,
  'loop.ts': `import { StatusCode, defineRule } from 'reflex-lxd';
export default [
  defineRule({ name: 'loop-a', on: ${onCrash}, scope: { filter: 'name eq loopy' }, actions: [{ action: 'emit', params: { name: 'ping' } }] }),
  defineRule({ name: 'loop-b', on: { kind: 'rule.event', name: ['ping'] }, actions: [{ action: 'emit', params: { name: 'pong' } }] }),
  defineRule({ name: 'loop-c', on: { kind: 'rule.event', name: ['pong'] }, actions: [{ action: 'emit', params: { name: 'ping' } }] }),
];
`,
};
const outcomes = (rs: StoredAuditRecord[], rule: string) => rs.filter((r) => r.type === 'outcome' && r.rule === rule).map((r) => r.summary);

describe('follow-up events (the emit action)', () => {
  const stopped = stoppedAfterEach();

  it('an emitted follow-up event triggers another rule once, and a loop is cut', async () => {
    const bed = stopped(await startReflexBed(rules));
    const { sim, client, prefix } = bed;
    sim.controls.addInstance({ name: 'web1' });
    sim.controls.addInstance({ name: 'loopy' });

    sim.controls.crash('web1');
    const trail = await waitForAudit(redisUrl(), prefix, 'web1', (rs) => outcomes(rs, 'snapshot-after-crash').length === 1);
    expect(outcomes(trail, 'announce-crash')).toEqual([expect.stringMatching(/^emit: emitted instance\.crashed \(event [0-9a-f]{32}, hop 1\)$/)]);
    expect(trail.some((r) => r.type === 'event' && /follow-up event instance\.crashed from rule announce-crash \(hop 1/.test(r.summary))).toBe(true);
    expect((await client.listSnapshots('web1')).map((s) => s.name)).toEqual(['after-crash']);

    sim.controls.crash('loopy');
    const loop = await waitForAudit(redisUrl(), prefix, 'loopy', (rs) => outcomes(rs, 'loop-b').length === 2);
    expect(outcomes(loop, 'loop-a')).toEqual([expect.stringMatching(/^emit: emitted ping .*hop 1\)$/)]);
    expect(outcomes(loop, 'loop-b')).toEqual([
      expect.stringMatching(/^emit: emitted pong .*hop 2\)$/),
      'emit: dropped pong: loop cut, rule loop-b already emitted earlier in this chain (loop-a → loop-b → loop-c → loop-b)',
    ]);
    expect(outcomes(loop, 'loop-c')).toEqual([expect.stringMatching(/^emit: emitted ping .*hop 3\)$/)]);
    await settled(redisUrl(), prefix); // a wrong extra round would be in a queue
    const after = await waitForAudit(redisUrl(), prefix, 'loopy', () => true);
    expect(after.filter((r) => r.type === 'outcome')).toHaveLength(4);
  }, 60_000);

  it('publishes once per rule and incident, and drops a chain longer than three hops', async () => {
    const ks = keySpace(uniquePrefix('emit'));
    const connection = redisClient();
    const events = new Queue(ks.eventsQueue, { connection, prefix: ks.bullPrefix });
    const client = new InstanceClient({ kind: 'unix', socketPath: '/nonexistent.sock', url: 'unix:///nonexistent.sock' });
    const ctx = (chain: string[]): ActionContext => ({
      client,
      instance: 'web1',
      params: { name: 'db.failover', payload: { to: 'db2' } },
      dryRun: false,
      clientNoting: () => client,
      audit: async () => undefined,
      job: { rule: 'r4', correlationId: 'incident-1', target: 't', project: 'default', location: 'node1', chain },
      publish: async (event, jobId) =>
        void (await events.add(event.kind, { kind: 'synthetic', target: event.target, event, receivedAt: Date.now() }, { jobId })),
    });
    try {
      const emit = { run: (c: Parameters<typeof runAction>[1]) => runAction(builtinActions.get('emit'), c) };
      expect(await emit.run(ctx([]))).toMatchObject({ result: 'done' });
      expect(await emit.run(ctx([]))).toMatchObject({ result: 'done' }); // a retried action
      const jobs = await events.getJobs(['waiting']);
      expect(jobs).toHaveLength(1);
      const event = jobs[0]!.data.event as CanonicalEvent;
      expect(event).toMatchObject({
        kind: 'rule.event',
        id: emittedEventId('r4', 'db.failover', 'incident-1'),
        name: 'db.failover',
        instance: 'web1',
        location: 'node1',
        payload: { to: 'db2' },
        rule: 'r4',
        causedBy: 'incident-1',
        chain: ['r4'],
      });
      const engine = new RuleEngine([
        defineRule({ name: 'on-failover', on: { kind: 'rule.event', name: ['db.failover'] }, actions: [{ action: 'start' }] }),
      ]);
      expect(await engine.decide(event, undefined)).toMatchObject([{ matched: true }]);
      expect(await engine.decide({ ...event, name: 'other' } as CanonicalEvent, undefined)).toEqual([]);

      expect(await emit.run(ctx(['r1', 'r2', 'r3']))).toEqual({
        result: 'skipped',
        summary: 'dropped db.failover: loop cut, the chain would be 4 hops long, more than 3 (r1 → r2 → r3 → r4)',
      });
      expect(await emit.run({ ...ctx([]), params: { name: 'Bad Name' } }).catch((e: { code: string }) => e.code)).toBe('CONFIG_INVALID');
    } finally {
      await events.close();
      connection.disconnect();
      await client.close();
    }
  });
});
