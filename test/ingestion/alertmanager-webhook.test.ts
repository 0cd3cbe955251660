import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Queue } from 'bullmq';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { AuditLog } from '../../src/audit/audit-log.js';
import { instanceOf } from '../../src/events/alert-event.js';
import { inboundSecrets, inboundWebhooks } from '../../src/http/inbound-webhooks.js';
import { parseConfig } from '../../src/config/config.js';
import { Secret } from '../../src/notify/secret.js';
import { redisFromUrl } from '../../src/redis/connect.js';
import { EventArchive } from '../../src/events/event-archive.js';
import { keySpace } from '../../src/redis/key-space.js';
import { startReflexBed, type ReflexBed } from '../actions/reflex-bed.js';
import { until } from '../support/wait.js';
import { settled } from '../support/settled.js';
import { freePort } from '../metrics/observability-bed.js';
import { redisClient, redisUrl } from '../support/redis.js';

const token = `am-token-${Math.random().toString(36).slice(2)}`;
const whsec = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

const rules = {
  'alerts.ts': `import { defineRule } from 'reflex-lxd';
export default [
  defineRule({ name: 'snapshot-on-high-memory', on: { kind: 'alert', alertname: ['HighMemory'], status: ['firing'] }, actions: [{ action: 'snapshot', params: { name: 'high-memory-%Y%m%d-%H%M%S' } }] }),
  defineRule({ name: 'snapshot-on-resolved', on: { kind: 'alert', status: ['resolved'], labels: { severity: 'warning' } }, actions: [{ action: 'snapshot', params: { name: 'resolved-%Y%m%d-%H%M%S' } }] }),
  defineRule({ name: 'snapshot-on-signed', on: { kind: 'alert', alertname: ['DiskFull'] }, actions: [{ action: 'snapshot', params: { name: 'disk-full-%Y%m%d-%H%M%S' } }] }),
];
`,
};

/** A webhook body exactly as Alertmanager 0.27 sends it (webhook_config, version 4): one firing alert, one resolved. */
const alertmanagerBody = JSON.stringify({
  receiver: 'reflex',
  status: 'firing',
  alerts: [
    {
      status: 'firing',
      labels: { alertname: 'HighMemory', instance: 'web-1', job: 'node', severity: 'critical' },
      annotations: { summary: 'web-1 uses 97% of its memory', description: 'memory above 95% for 5 minutes' },
      startsAt: '2026-11-24T08:40:15.312Z',
      endsAt: '0001-01-01T00:00:00Z',
      generatorURL: 'http://prometheus:9090/graph?g0.expr=node_memory_usage+%3E+0.95&g0.tab=1',
      fingerprint: 'a3c8e1f04b2d9e77',
    },
    {
      status: 'resolved',
      labels: { alertname: 'HighLoad', instance: 'db-1:9100', job: 'node', severity: 'warning' },
      annotations: { summary: 'db-1 load is back to normal' },
      startsAt: '2026-11-24T08:10:00.000Z',
      endsAt: '2026-11-24T08:39:45.000Z',
      generatorURL: 'http://prometheus:9090/graph?g0.expr=node_load5+%3E+4&g0.tab=1',
      fingerprint: '5f0b7c2a9de31c40',
    },
  ],
  groupLabels: { job: 'node' },
  commonLabels: { job: 'node' },
  commonAnnotations: {},
  externalURL: 'http://alertmanager:9093',
  version: '4',
  groupKey: '{}:{job="node"}',
  truncatedAlerts: 0,
});

describe('inbound alerts: Alertmanager webhook and generic signed webhook', () => {
  let bed: ReflexBed;
  let url: string;
  const redis = redisClient();
  let keys: ReturnType<typeof keySpace>;
  let queue: Queue;

  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${url}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
  const postAlertmanager = (body: string, auth = `Bearer ${token}`) => post('/hooks/alertmanager', body, auth ? { authorization: auth } : {});
  const snapshots = async (instance: string) => (await bed.client.listSnapshots(instance)).map((s) => s.name);
  const queued = async () => (await queue.getJobs(['waiting', 'active', 'completed', 'failed', 'delayed'])).filter((j) => j.name === 'alert').length;

  beforeAll(async () => {
    mkdirSync(resolve('.tmp'), { recursive: true });
    const secrets = mkdtempSync(join(resolve('.tmp'), 'inbound-'));
    writeFileSync(join(secrets, 'am-token'), `${token}\n`);
    writeFileSync(join(secrets, 'whsec'), `${whsec}\n`);
    bed = await startReflexBed(rules, {
      httpPort: await freePort(),
      inbound: { alertmanager: { tokenFile: join(secrets, 'am-token') }, webhook: { secretFile: join(secrets, 'whsec') } },
    });
    for (const name of ['web-1', 'db-1', 'app-1']) bed.sim.controls.addInstance({ name });
    url = bed.reflex.http!.url;
    keys = keySpace(bed.prefix);
    queue = new Queue(keys.eventsQueue, { connection: redisClient(), prefix: keys.bullPrefix });
  });

  afterAll(async () => {
    await queue?.close();
    await bed?.stop();
    redis.disconnect();
  });

  it('refuses a post without a token or with a wrong one (401) and queues nothing', async () => {
    const none = await postAlertmanager(alertmanagerBody, '');
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toContain('Bearer');
    expect((await postAlertmanager(alertmanagerBody, 'Bearer not-the-token')).status).toBe(401);
    expect((await postAlertmanager(alertmanagerBody, `Basic ${Buffer.from('alertmanager:wrong').toString('base64')}`)).status).toBe(401);
    expect(await queued()).toBe(0);
    expect(await redis.xlen(keys.rejected)).toBe(0);
  });

  it('turns each alert of an Alertmanager webhook into an event a rule acts on, archived and audited', async () => {
    const res = await postAlertmanager(alertmanagerBody);
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { accepted: number; events: { alertname: string; status: string; instance: string }[] };
    expect(answer.accepted).toBe(2);
    // The exporter's :9100 is dropped: db-1 is the instance.
    expect(answer.events.map((e) => [e.alertname, e.status, e.instance])).toEqual([
      ['HighMemory', 'firing', 'web-1'],
      ['HighLoad', 'resolved', 'db-1'],
    ]);

    await until('the HighMemory snapshot of web-1', async () => (await snapshots('web-1')).length === 1, 15_000);
    expect((await snapshots('web-1'))[0]).toMatch(/^high-memory-\d{8}-\d{6}$/);
    // A resolved alert is an event too, and a rule may act on it.
    await until('the resolved snapshot of db-1', async () => (await snapshots('db-1')).length === 1, 15_000);
    expect((await snapshots('db-1'))[0]).toMatch(/^resolved-/);

    const archived = await new EventArchive({ redis, key: keys.archive }).read({ kind: 'alert' });
    expect(archived.map((a) => [a.event.kind === 'alert' && a.event.alertname, a.outcome, 'instance' in a.event && a.event.instance])).toEqual([
      ['HighMemory', 'processed', 'web-1'],
      ['HighLoad', 'processed', 'db-1'],
    ]);
    expect(archived[0]!.event).toMatchObject({
      source: 'alertmanager',
      status: 'firing',
      fingerprint: 'a3c8e1f04b2d9e77',
      project: 'default',
      target: bed.reflex.target,
      labels: { severity: 'critical' },
      annotations: { summary: 'web-1 uses 97% of its memory' },
    });
    expect(archived[0]!.event).not.toHaveProperty('endsAt'); // Alertmanager's zero time says nothing

    const audit = new AuditLog(redis, keys.audit);
    await until(
      'the outcome audited',
      async () => (await audit.read({ instance: 'web-1' })).some((r) => r.type === 'outcome' && r.rule === 'snapshot-on-high-memory'),
      10_000,
    );
    const trail = await audit.read({ instance: 'web-1' });
    expect(trail.find((r) => r.type === 'event')?.summary).toContain('alert HighMemory firing (from alertmanager');
    expect(trail.filter((r) => r.type === 'decision' && r.rule === 'snapshot-on-high-memory').map((r) => r.summary)).toEqual(['matched']);
  });

  it('acts once when Alertmanager delivers the same webhook again, even after the queue forgot the first', async () => {
    expect((await postAlertmanager(alertmanagerBody)).status).toBe(200);
    expect(await queued()).toBe(2); // the job ids are the event ids: nothing new queued
    // As after the events queue's retention (1 h): the processor's done marks and the action job ids still hold.
    for (const job of await queue.getJobs(['completed'])) if (job.name === 'alert') await job.remove();
    expect((await postAlertmanager(alertmanagerBody, `Basic ${Buffer.from(`alertmanager:${token}`).toString('base64')}`)).status).toBe(200);
    await until(
      'the redelivery processed',
      async () => {
        const counts = await queue.getJobCounts('waiting', 'active');
        return (counts.waiting ?? 0) + (counts.active ?? 0) === 0 && (await queued()) === 2;
      },
      10_000,
    );
    await settled(redisUrl(), bed.prefix); // a second snapshot would be an action job left in the queues
    expect(await snapshots('web-1')).toHaveLength(1);
    expect(await snapshots('db-1')).toHaveLength(1);
    expect(await new EventArchive({ redis, key: keys.archive }).read({ kind: 'alert' })).toHaveLength(2);
  });

  it('refuses a malformed body with 400 naming the problem, and keeps it for inspection', async () => {
    const bad = JSON.stringify({
      ...JSON.parse(alertmanagerBody),
      alerts: [{ status: 'burning', labels: { instance: 'web-1' }, annotations: {}, startsAt: 'yesterday' }],
    });
    const res = await postAlertmanager(bad);
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as { error: string };
    expect(error).toContain('alerts.0.status');
    expect(error).toContain('alerts.0.labels: needs an alertname label');
    expect(error).toContain('alerts.0.startsAt: an RFC 3339 time');
    expect((await postAlertmanager('{"version": "4", "alerts": [')).status).toBe(400);
    const kept = await redis.xrange(keys.rejected, '-', '+');
    expect(kept).toHaveLength(2);
    expect(kept[0]![1]).toEqual(expect.arrayContaining(['raw', bad]));
    const rejected = (await new AuditLog(redis, keys.audit).read({})).filter((r) => r.type === 'rejected');
    expect(rejected.map((r) => r.summary)).toEqual([
      expect.stringContaining('POST /hooks/alertmanager: alerts.0.status'),
      expect.stringContaining('POST /hooks/alertmanager: not JSON'),
    ]);
  });

  it('accepts a generic webhook signed with the Standard Webhooks scheme, and refuses a bad or stale signature', async () => {
    const body = JSON.stringify({
      alerts: [{ alertname: 'DiskFull', labels: { lxd_instance: 'app-1', instance: '10.0.0.5:9100' }, annotations: { summary: '/var is full' } }],
    });
    const signer = new Webhook(whsec);
    const signed = (id: string, at: Date, b = body) => ({
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': signer.sign(id, at, b),
    });

    const stale = await post('/hooks/webhook', body, signed('msg-old', new Date(Date.now() - 3_600_000)));
    expect(stale.status).toBe(401);
    expect(((await stale.json()) as { error: string }).error).toContain('too far from now');
    const tampered = await post('/hooks/webhook', body.replace('app-1', 'web-1'), signed('msg-1', new Date()));
    expect(tampered.status).toBe(401);
    expect(((await tampered.json()) as { error: string }).error).toContain('does not match');
    expect((await post('/hooks/webhook', body)).status).toBe(401);
    expect(
      (await post('/hooks/webhook', body, { ...signed('msg-1', new Date()), 'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')}` }))
        .status,
    ).toBe(401);

    const ok = await post('/hooks/webhook', body, signed('msg-1', new Date()));
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { events: { instance: string }[] }).events[0]!.instance).toBe('app-1');
    // The sender's retry: the same message id, signed again later: one event.
    expect((await post('/hooks/webhook', body, signed('msg-1', new Date(Date.now() + 1000)))).status).toBe(200);
    await until('the DiskFull snapshot of app-1', async () => (await snapshots('app-1')).length === 1, 15_000);
    await settled(redisUrl(), bed.prefix); // a second snapshot would be an action job left in the queues
    expect(await snapshots('app-1')).toHaveLength(1);
  });

  it('decides an alert that names no instance (an address in its instance label) and audits why nothing acts', async () => {
    const body = JSON.stringify({
      ...JSON.parse(alertmanagerBody),
      alerts: [
        {
          status: 'firing',
          labels: { alertname: 'HighMemory', instance: '10.0.0.9:9100' },
          annotations: {},
          startsAt: '2026-11-24T08:50:00Z',
          endsAt: '0001-01-01T00:00:00Z',
          fingerprint: 'no-instance-1',
        },
      ],
    });
    const res = await postAlertmanager(body);
    expect(res.status).toBe(200);
    const [event] = ((await res.json()) as { events: { id: string; instance: string | null }[] }).events;
    expect(event!.instance).toBeNull();
    const audit = new AuditLog(redis, keys.audit);
    await until(
      'the decision audited',
      async () => (await audit.read({})).some((r) => r.correlationId === event!.id && r.type === 'decision'),
      10_000,
    );
    const records = (await audit.read({})).filter((r) => r.correlationId === event!.id);
    expect(records.map((r) => [r.type, r.rule ?? '', r.summary])).toEqual([
      ['event', '', expect.stringContaining('(no instance): alert HighMemory firing')],
      ['decision', 'snapshot-on-high-memory', 'matched; no action: the event names no instance'],
    ]);
  });

  // Last: the server answers before reading the body and closes that connection.
  it('refuses a body larger than the bound (413)', async () => {
    const res = await postAlertmanager(JSON.stringify({ padding: 'x'.repeat(1_100_000) }));
    expect(res.status).toBe(413);
  });
});

describe('inbound alerts: edges', () => {
  it('answers 503 when Redis cannot take the alerts (Alertmanager retries), after checking the token', async () => {
    const port = await freePort(); // nothing listens there
    const dead = redisFromUrl(`redis://127.0.0.1:${port}`);
    dead.on('error', () => undefined);
    const queue = new Queue('events', { connection: { host: '127.0.0.1', port, maxRetriesPerRequest: null } });
    queue.on('error', () => undefined);
    const app = inboundWebhooks({
      queue,
      redis: dead,
      rejectedKey: 'rejected',
      audit: new AuditLog(dead, 'audit'),
      mapping: { defaultTarget: 't', targets: new Map([['t', 't']]) },
      alertmanagerToken: new Secret(token, 'test'),
      enqueueTimeoutMs: 300,
      logger: pino({ level: 'silent' }),
    });
    try {
      expect((await app.request('/alertmanager', { method: 'POST', body: alertmanagerBody })).status).toBe(401);
      const res = await app.request('/alertmanager', { method: 'POST', body: alertmanagerBody, headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('10');
      expect((await app.request('/webhook', { method: 'POST', body: '{}' })).status).toBe(404); // no secret: off
    } finally {
      await queue.close().catch(() => undefined);
      dead.disconnect();
    }
  });

  it('enables no endpoint without its secret, and fails the start on a secret it cannot read or use', () => {
    expect(inboundSecrets(undefined)).toEqual({});
    expect(() => inboundSecrets({ alertmanager: { tokenEnv: 'REFLEX_TEST_UNSET_TOKEN_VARIABLE' } })).toThrow(
      'inbound.alertmanager.tokenEnv: environment variable REFLEX_TEST_UNSET_TOKEN_VARIABLE is not set',
    );
    expect(() => inboundSecrets({ webhook: { secretFile: '/nonexistent/whsec' } })).toThrow(
      /^inbound\.webhook\.secretFile: cannot read secret file \/nonexistent\/whsec: ENOENT$/,
    );
    mkdirSync(resolve('.tmp'), { recursive: true });
    const dir = mkdtempSync(join(resolve('.tmp'), 'inbound-bad-'));
    writeFileSync(join(dir, 'plain'), 'not-a-whsec-secret');
    expect(() => inboundSecrets({ webhook: { secretFile: join(dir, 'plain') } })).toThrow('does not start with whsec_');
    expect(() => parseConfig({ inbound: { alertmanager: {} } })).toThrow('inbound.alertmanager: give exactly one of tokenEnv and tokenFile');
  });

  it('takes the instance from the first label that names one: an exporter port is dropped, an address names none', () => {
    expect(instanceOf({ instance: 'web-1:9100' })).toBe('web-1');
    expect(instanceOf({ lxd_instance: 'app-1', instance: 'web-1' })).toBe('app-1');
    // LXD's own metrics: instance is the server's address, name the instance.
    expect(instanceOf({ instance: '10.0.0.5:8443', name: 'db-2' })).toBe('db-2');
    expect(instanceOf({ instance: 'web-1.example.org:9100' })).toBeUndefined();
    expect(instanceOf({ host: 'web-1' }, ['host'])).toBe('web-1');
  });
});

describe('inbound alerts on a cluster', () => {
  it('gives the alert the member the instance runs on, so a rule scoped to that member acts', async () => {
    const dir = mkdtempSync(join(resolve('.tmp'), 'inbound-cluster-'));
    writeFileSync(join(dir, 'am-token'), token);
    const scoped = {
      'alerts.ts': `import { defineRule } from 'reflex-lxd';
export default defineRule({ name: 'snapshot-on-m2', on: { kind: 'alert', alertname: ['HighMemory'] }, scope: { locations: ['m2'] }, actions: [{ action: 'snapshot', params: { name: 'on-m2' } }] });
`,
    };
    const bed = await startReflexBed(
      scoped,
      { httpPort: await freePort(), inbound: { alertmanager: { tokenFile: join(dir, 'am-token') } } },
      { cluster: { members: ['m1', 'm2'] } },
    );
    const redis = redisClient();
    try {
      bed.sim.controls.addInstance({ name: 'web-1', location: 'm2' });
      const res = await fetch(`${bed.reflex.http!.url}/hooks/alertmanager`, {
        method: 'POST',
        body: alertmanagerBody,
        headers: { authorization: `Bearer ${token}` },
      });
      expect(res.status).toBe(200);
      await until('the snapshot of web-1 on m2', async () => (await bed.client.listSnapshots('web-1')).length === 1, 15_000);
      const decisions = (await new AuditLog(redis, keySpace(bed.prefix).audit).read({ instance: 'web-1' })).filter((r) => r.type === 'decision');
      expect(decisions.map((r) => r.summary)).toEqual(['matched']);
    } finally {
      redis.disconnect();
      await bed.stop();
    }
  });
});
