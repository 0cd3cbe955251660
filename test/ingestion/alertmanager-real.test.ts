import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventArchive } from '../../src/events/event-archive.js';
import { keySpace } from '../../src/redis/key-space.js';
import { startReflexBed, type ReflexBed } from '../actions/reflex-bed.js';
import { sleep, until } from '../support/wait.js';
import { freePort } from '../metrics/observability-bed.js';
import { redisClient } from '../support/redis.js';

/** Debian's package (apt-get install prometheus-alertmanager); the upstream binary is `alertmanager`. */
const binary = ['prometheus-alertmanager', 'alertmanager'].find((b) => spawnSync(b, ['--version']).status === 0);
const token = `am-real-${Math.random().toString(36).slice(2)}`;

const rules = {
  'alerts.ts': `import { defineRule } from 'reflex-lxd';
export default [
  defineRule({ name: 'snapshot-on-high-memory', on: { kind: 'alert', alertname: ['HighMemory'], status: ['firing'] }, actions: [{ action: 'snapshot', params: { name: 'high-memory-%Y%m%d-%H%M%S' } }] }),
  defineRule({ name: 'snapshot-when-cleared', on: { kind: 'alert', alertname: ['HighMemory'], status: ['resolved'] }, actions: [{ action: 'snapshot', params: { name: 'cleared-%Y%m%d-%H%M%S' } }] }),
];
`,
};

// Skipped where Alertmanager is not installed, unless REFLEX_REQUIRE_ALERTMANAGER=1 (CI) turns its absence into a failure.
if (!binary && process.env.REFLEX_REQUIRE_ALERTMANAGER === '1') {
  describe('a real Alertmanager posting to Reflex', () => {
    it('needs Alertmanager', () => {
      throw new Error(
        'Alertmanager required (REFLEX_REQUIRE_ALERTMANAGER=1) but neither prometheus-alertmanager nor alertmanager runs: apt-get install prometheus-alertmanager',
      );
    });
  });
}

// A real Alertmanager posting its own webhooks: the format and the auth are Alertmanager's, not ours.
describe.skipIf(!binary)('a real Alertmanager posting to Reflex', () => {
  let bed: ReflexBed;
  let am: ChildProcess;
  let amUrl: string;
  const redis = redisClient();
  const snapshots = async () => (await bed.client.listSnapshots('web-1')).map((s) => s.name);
  const postAlert = async (endsAt?: string) => {
    const res = await fetch(`${amUrl}/api/v2/alerts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([
        {
          labels: { alertname: 'HighMemory', instance: 'web-1:9100', job: 'node' },
          annotations: { summary: 'web-1 uses 97% of its memory' },
          ...(endsAt ? { endsAt } : {}),
        },
      ]),
    });
    expect(res.status).toBe(200);
  };

  beforeAll(async () => {
    mkdirSync(resolve('.tmp'), { recursive: true });
    const dir = mkdtempSync(join(resolve('.tmp'), 'alertmanager-'));
    writeFileSync(join(dir, 'token'), token);
    bed = await startReflexBed(rules, { httpPort: await freePort(), inbound: { alertmanager: { tokenFile: join(dir, 'token') } } });
    bed.sim.controls.addInstance({ name: 'web-1' });
    const amPort = await freePort();
    amUrl = `http://127.0.0.1:${amPort}`;
    writeFileSync(
      join(dir, 'alertmanager.yml'),
      [
        'route:',
        '  receiver: reflex',
        "  group_by: ['alertname']",
        '  group_wait: 1s',
        '  group_interval: 1s',
        '  repeat_interval: 1h',
        'receivers:',
        '  - name: reflex',
        '    webhook_configs:',
        `      - url: ${bed.reflex.http!.url}/hooks/alertmanager`,
        '        send_resolved: true',
        '        http_config:',
        '          authorization:',
        `            credentials_file: ${join(dir, 'token')}`,
        '',
      ].join('\n'),
    );
    am = spawn(
      binary!,
      [
        `--config.file=${join(dir, 'alertmanager.yml')}`,
        `--storage.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${amPort}`,
        '--cluster.listen-address=',
      ],
      { stdio: 'ignore' },
    );
    await until('Alertmanager ready', async () => (await fetch(`${amUrl}/-/ready`).catch(() => undefined))?.status === 200, 20_000);
  });

  afterAll(async () => {
    am?.kill('SIGTERM');
    await bed?.stop();
    redis.disconnect();
  });

  it('a firing alert becomes an event a rule snapshots on, and its resolution another', async () => {
    await postAlert();
    await until('the snapshot of the firing alert', async () => (await snapshots()).some((n) => n.startsWith('high-memory-')), 30_000);
    const [fired] = (await (await fetch(`${amUrl}/api/v2/alerts`)).json()) as { fingerprint: string }[];
    const archive = new EventArchive({ redis, key: keySpace(bed.prefix).archive });
    const firing = (await archive.read({ kind: 'alert' }))[0]!.event;
    expect(firing).toMatchObject({
      source: 'alertmanager',
      alertname: 'HighMemory',
      status: 'firing',
      instance: 'web-1',
      fingerprint: fired!.fingerprint,
      annotations: { summary: 'web-1 uses 97% of its memory' },
    });

    await postAlert(new Date().toISOString());
    await until('the snapshot of the resolved alert', async () => (await snapshots()).some((n) => n.startsWith('cleared-')), 30_000);
    const events = (await archive.read({ kind: 'alert' })).map((a) => a.event);
    expect(events.map((e) => e.kind === 'alert' && e.status)).toEqual(['firing', 'resolved']);
    // Nothing more comes of it (Alertmanager may post the group again): still one snapshot each.
    await sleep(2_500); // a quiet period: Alertmanager posting the group again would show in it
    expect((await snapshots()).length).toBe(2);
  });
});
