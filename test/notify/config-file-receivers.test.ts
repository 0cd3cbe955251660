import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pino } from 'pino';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReflex, type ReflexHandle } from '../../src/app/start-reflex.js';
import { readConfigFile } from '../../src/config/config-file.js';
import { parseConfig } from '../../src/config/config.js';
import { chooseNotifyConfig, type NotifyConfig } from '../../src/notify/notify-config.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { redisClient, redisUrl, uniquePrefix } from '../support/redis.js';
import { testWebhookSecret } from './notifier-fixture.js';
import { startRecordingServer, type RecordingServer } from './recording-server.js';
import { until } from '../support/wait.js';

const hook = { kind: 'webhook', name: 'hook', url: 'http://127.0.0.1:1/hook', secretEnv: 'HOOK_SECRET' } as const;
const settings: NotifyConfig = { receivers: [hook], route: { receiver: 'hook' } };

describe('receivers in the config file', () => {
  let dir: string;
  let sim: RunningSimulator;
  let server: RecordingServer;
  let reflex: ReflexHandle | undefined;
  const prefix = uniquePrefix('cfgnotify');

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'reflex-config-'));
    server = await startRecordingServer();
    sim = await startSimulator({ instances: 0 });
    sim.controls.addInstance({ name: 'batch-1', config: {} });
  });

  afterAll(async () => {
    await reflex?.stop();
    await sim.stop();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
    const redis = redisClient();
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  it('a YAML config file with a signed webhook (secret in a file) delivers a real alert that the standardwebhooks library verifies', async () => {
    writeFileSync(join(dir, 'hook.secret'), `${testWebhookSecret}\n`, { mode: 0o600 });
    const file = join(dir, 'config.yaml');
    writeFileSync(
      file,
      `target: unix://${sim.socketPath}
redisUrl: ${redisUrl()}
rulesDir: ${resolve('rules')}
prefix: ${prefix}
resyncIntervalMs: 0
httpPort: 0
logLevel: silent
notifications:
  auditUrl: https://reflex.example/dashboard?instance={instance}
  receivers:
    - kind: webhook
      name: ops-hook
      url: ${server.url}
      secretFile: ${join(dir, 'hook.secret')}
      backoffMs: 100
  route:
    receiver: ops-hook
    groupBy: [kind, project]
    groupWaitMs: 100
    groupIntervalMs: 300
`,
    );
    reflex = await startReflex(parseConfig(readConfigFile(file)), pino({ level: 'silent' }));
    await until('the event stream', () => reflex!.subscriber?.connected === true);
    sim.controls.crash('batch-1');
    await until('the alert', () => server.requests.length === 1, 15_000);
    const req = server.requests[0]!;
    const body = new Webhook(testWebhookSecret).verify(req.raw, req.headers as Record<string, string>) as {
      status: string;
      alerts: Record<string, unknown>[];
    };
    expect(body.status).toBe('firing');
    expect(body.alerts[0]).toMatchObject({
      kind: 'instance.crashed',
      instance: 'batch-1',
      severity: 'critical',
      auditUrl: 'https://reflex.example/dashboard?instance=batch-1',
    });
  });

  it('the config file names secrets, never holds them: a template, or a url with urlEnv, is refused naming the field', () => {
    const withReceiver = (receiver: Record<string, unknown>) => () =>
      parseConfig({ notifications: { receivers: [receiver], route: { receiver: 'hook' } } } as never);
    expect(withReceiver({ ...hook, template: 'x' })).toThrow(/notifications\.receivers\.0: Unrecognized key: "template"/);
    expect(withReceiver({ ...hook, urlEnv: 'HOOK_URL' })).toThrow(/notifications\.receivers\.0\.urlEnv: give exactly one of url, urlEnv, urlFile/);
    expect(withReceiver({ ...hook, secretEnv: undefined })).toThrow(
      /notifications\.receivers\.0\.secretEnv: give exactly one of secretEnv, secretFile/,
    );
    expect(withReceiver({ ...hook, secret: testWebhookSecret })).toThrow(/Unrecognized key: "secret"/);
    expect(() => parseConfig({ notifications: { receivers: [hook], route: { receiver: 'hook', filter: 'x' } } } as never)).toThrow(
      /notifications\.route: Unrecognized key: "filter"/,
    );
  });

  it('receivers come from one place: the config file, REFLEX_NOTIFY or the rules folder; two of them is a config error naming both', () => {
    expect(chooseNotifyConfig({ env: {} })).toBeUndefined();
    expect(chooseNotifyConfig({ config: settings, env: {} })).toEqual({ settings, from: 'the config file (notifications)' });
    expect(chooseNotifyConfig({ rulesFolder: settings, env: {} })?.from).toBe('the rules folder (a defineNotifications file)');
    expect(chooseNotifyConfig({ env: { REFLEX_NOTIFY: JSON.stringify(settings) } })).toEqual({
      settings: { ...settings, receivers: [expect.objectContaining(hook)] },
      from: 'the environment (REFLEX_NOTIFY)',
    });
    expect(() => chooseNotifyConfig({ config: settings, rulesFolder: settings, env: {} })).toThrow(
      expect.objectContaining({
        code: 'CONFIG_INVALID',
        message: expect.stringContaining('the config file (notifications) and the rules folder (a defineNotifications file)'),
      }),
    );
    expect(() => chooseNotifyConfig({ config: settings, env: { REFLEX_NOTIFY: JSON.stringify(settings) } })).toThrow(
      /the config file \(notifications\) and the environment \(REFLEX_NOTIFY\)/,
    );
    expect(() =>
      chooseNotifyConfig({ env: { REFLEX_NOTIFY: JSON.stringify({ receivers: [{ ...hook, secretEnv: undefined }], route: { receiver: 'hook' } }) } }),
    ).toThrow(/REFLEX_NOTIFY: receivers\.0\.secretEnv: give exactly one of secretEnv, secretFile/);
  });
});
